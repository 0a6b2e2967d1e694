#pragma once

// Watch plumbing. The Store publishes every committed change as an Event (with the state before
// and after) into a WatchHub, which keeps a bounded history for resuming from a resourceVersion
// and fans events out to Watchers. A Watcher filters by collection, namespace and selectors
// (an object leaving the selection is reported as DELETED, one entering as ADDED, as upstream)
// and queues them for its reader. WatchSession turns a Watcher into the stream an HTTP watch
// writes: events, BOOKMARKs at an interval, heartbeats on idle streams, and an end at the
// deadline (timeoutSeconds) or when the server stops.

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/kube/client.h"
#include "common/kube/object.h"
#include "common/kube/selector.h"
#include "common/time/clock.h"

namespace nereid::devapi {

using kube::Json;
using kube::ObjectPtr;

struct Event {
  kube::WatchEvent::Type type = kube::WatchEvent::Type::kAdded;  // kAdded|kModified|kDeleted
  int64_t resource_version = 0;
  std::string storage_key;  // "group/resource"
  ObjectPtr object;         // state after the change (for DELETED: the last state)
  ObjectPtr previous;       // state before (null for ADDED)
};

// Which objects a watcher (or a list) selects.
struct Selection {
  std::string storage_key;
  std::string ns;  // empty: all namespaces
  kube::LabelSelector labels;
  kube::FieldSelector fields;
  kube::FieldSelector::FieldGetter getter;

  bool Matches(const Json& object) const;
};

class Watcher {
 public:
  enum class Result { kEvent, kTimeout, kClosed };

  // `api_version` is written into every object handed out (CRDs may serve several versions).
  Watcher(Selection selection, std::string api_version, size_t max_queue, int64_t start_version);

  // Blocks until an event is queued (kEvent), `deadline` passes on `clock` (kTimeout), or the
  // watcher is closed and drained (kClosed).
  Result Next(Clock* clock, absl::Time deadline, kube::WatchEvent* event);

  // The version a BOOKMARK may carry now: every event up to it that concerns this watcher has
  // been returned by Next. nullopt while events are pending.
  std::optional<int64_t> BookmarkVersion() const;

  // Ends the stream; pending events are still delivered first.
  void Close();
  // Ends the stream because its versions are gone: after the pending events the reader gets an
  // ERROR event with 410 Expired (a fault devapiserver injects on request), and must relist.
  void Expire();
  bool closed() const;
  // Why the watcher was closed by the server (e.g. it fell too far behind); OK otherwise.
  absl::Status close_reason() const;

  // Store side (called with the store's lock held).
  void Offer(const Event& event);
  void OfferInitial(const ObjectPtr& object, int64_t version);

 private:
  void PushLocked(kube::WatchEvent::Type type, ObjectPtr object, int64_t version)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Selection selection_;
  const std::string api_version_;
  const size_t max_queue_;

  mutable absl::Mutex mu_;
  struct Item {
    kube::WatchEvent::Type type;
    ObjectPtr object;
    int64_t version;
  };
  std::deque<Item> queue_ ABSL_GUARDED_BY(mu_);
  int64_t offered_version_ ABSL_GUARDED_BY(mu_);  // highest version seen by Offer
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status close_reason_ ABSL_GUARDED_BY(mu_);
};

// History and fan-out. Not thread-safe by itself: the Store serializes every call under its lock,
// which is what makes "snapshot, then subscribe" atomic.
class WatchHub {
 public:
  explicit WatchHub(size_t history_size);

  // Versions at or above floor() can be resumed from; below it → 410 Expired.
  int64_t floor() const { return floor_; }
  void ResetFloor(int64_t version) { floor_ = version; }

  void Publish(Event event);
  // Queues for `watcher` every retained event after `version` (caller checked the floor).
  void Replay(int64_t version, Watcher& watcher) const;
  // Events after `version` for one collection, oldest first (for consistent paged lists).
  std::vector<const Event*> EventsAfter(int64_t version, const std::string& storage_key) const;

  void Register(std::shared_ptr<Watcher> watcher);
  void CloseAll();
  // Forgets the history (nothing up to `current_version` can be resumed from) and expires every
  // watcher: clients see 410 and relist, as after a compaction.
  void ExpireAll(int64_t current_version);
  size_t watcher_count() const { return watchers_.size(); }

 private:
  const size_t history_size_;
  std::deque<Event> history_;
  int64_t floor_ = 0;
  std::vector<std::weak_ptr<Watcher>> watchers_;
};

struct WatchSessionOptions {
  bool allow_bookmarks = false;
  absl::Duration bookmark_interval = absl::Seconds(15);
  // Idle streams without bookmarks get a blank line this often so a vanished client is noticed
  // (JSON stream decoders, client-go's included, skip whitespace between objects).
  absl::Duration heartbeat_interval = absl::Seconds(15);
  absl::Time deadline = absl::InfiniteFuture();
};

// One HTTP watch stream's schedule.
class WatchSession {
 public:
  enum class Step { kEvent, kBookmark, kHeartbeat, kEnd };

  WatchSession(std::shared_ptr<Watcher> watcher, Clock* clock, WatchSessionOptions options,
               std::string kind, std::string api_version);

  // Blocks until the next thing to write. kEvent and kBookmark fill `event`.
  Step Next(kube::WatchEvent* event);
  Watcher& watcher() { return *watcher_; }

 private:
  std::shared_ptr<Watcher> watcher_;
  Clock* clock_;
  WatchSessionOptions options_;
  std::string kind_;
  std::string api_version_;
  absl::Time next_bookmark_;
  absl::Time last_write_;
  bool ended_ = false;  // the closing ERROR event went out
};

}  // namespace nereid::devapi
