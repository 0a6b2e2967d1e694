#pragma once

// Reflector: keeps a store in step with one resource on the API server (client-go
// tools/cache/reflector.go), on its own thread:
//
//   list (paged, `page_size` per page) → store.Replace → watch from the list's resourceVersion
//   (allowWatchBookmarks, timeoutSeconds random in [min, 2·min)) → store.Add/Update/Delete
//
//   - a watch that ends normally (the server's timeout) is resumed from the last seen
//     resourceVersion without relisting; bookmarks advance that version;
//   - 410 Gone (at watch start, as an ERROR event, or on the list itself) → relist; the first 410
//     relists at once, repeated 410s without progress in between back off;
//   - every other failure (list or watch errors, a watch that closes within `min_healthy_watch`
//     with no events) backs off 0.8 s ×2 up to 30 s on the injected Clock; the backoff starts
//     again from 0.8 s once `backoff_reset_after` (2 min) passes without failure. After a watch
//     error the watch is resumed from the last version: a watch either continues exactly where it
//     left off or fails with 410, so no relist is needed;
//   - Stop() is prompt: it cancels the open watch and interrupts backoff waits (an in-flight list
//     call finishes first, bounded by the client's own timeout).
//
// Differences from client-go: after non-410 errors we resume the watch instead of relisting, and
// the first 410 relists without waiting.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/kube/cache_transform.h"
#include "common/kube/client.h"
#include "common/kube/object.h"
#include "common/kube/resource.h"
#include "common/time/backoff.h"
#include "common/time/clock.h"

namespace nereid::kube {

// Where a reflector puts what it sees. Called only from the reflector's thread, one call at a time.
class ReflectorStore {
 public:
  virtual ~ReflectorStore() = default;
  // The complete state of the resource at `resource_version` (a list or relist).
  virtual void Replace(std::vector<ObjectPtr> objects, const std::string& resource_version) = 0;
  virtual void Add(ObjectPtr object) = 0;
  virtual void Update(ObjectPtr object) = 0;
  // `object` is the last state the server sent (the DELETED event's object).
  virtual void Delete(ObjectPtr object) = 0;
};

struct ReflectorOptions {
  std::string name;  // For logs and the thread name; defaults to the resource.
  std::string ns;    // "" = all namespaces.
  std::string label_selector;
  std::string field_selector;
  int64_t page_size = 500;  // client-go's pager default.
  // Each watch asks the server to end it after a random time in [min, 2·min), spreading load.
  absl::Duration min_watch_timeout = absl::Minutes(5);
  ExponentialBackoff::Options backoff = {.initial = absl::Milliseconds(800),
                                         .multiplier = 2.0,
                                         .max = absl::Seconds(30),
                                         .jitter = 0.2};
  absl::Duration backoff_reset_after = absl::Minutes(2);
  // A watch that ends this soon with no events is treated as a failure (client-go's
  // VeryShortWatchError), so a server that closes watches at once is not hammered.
  absl::Duration min_healthy_watch = absl::Seconds(1);
  // Random source in [0, 1) for watch timeouts and backoff jitter; nullptr: a real one.
  std::function<double()> uniform01;
  // Observes each backoff delay before the reflector waits it out (metrics, tests).
  std::function<void(absl::Duration)> on_backoff;
  // Applied to every listed or watched object before the store sees it; null: none.
  ObjectTransform transform;
};

class Reflector {
 public:
  struct Stats {
    int64_t lists = 0;    // Completed (re)lists.
    int64_t watches = 0;  // Watches opened.
    int64_t gone = 0;     // 410 Gone seen (each causes a relist).
    int64_t backoffs = 0;
  };

  Reflector(KubeClient* client, Resource resource, ReflectorStore* store, Clock* clock,
            ReflectorOptions options = {});
  ~Reflector();
  Reflector(const Reflector&) = delete;
  Reflector& operator=(const Reflector&) = delete;

  void Start();
  void Stop();

  // Whether the first list has been delivered to the store.
  bool HasSynced() const;
  // The resourceVersion the store reflects: of the last list, event or bookmark.
  std::string LastSyncResourceVersion() const;
  Stats GetStats() const;

 private:
  enum class WatchOutcome { kClosed, kTooShort, kGone, kError, kStopped };

  void Run();
  absl::Status ListAndReplace();
  WatchOutcome WatchOnce();
  // Waits out the next backoff delay; false if stopped meanwhile.
  bool Backoff();
  bool WaitOrStop(absl::Duration delay);
  bool Stopped() const;

  KubeClient* const client_;
  const Resource resource_;
  ReflectorStore* const store_;
  Clock* const clock_;
  ReflectorOptions options_;
  std::function<double()> uniform01_;

  // Owned by the reflector thread.
  ExponentialBackoff backoff_;
  std::optional<absl::Time> last_failure_;
  int consecutive_gone_ = 0;
  bool last_sync_rv_unavailable_ = false;

  mutable absl::Mutex mu_;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  bool synced_ ABSL_GUARDED_BY(mu_) = false;
  std::string last_sync_rv_ ABSL_GUARDED_BY(mu_);
  WatchStream* current_watch_ ABSL_GUARDED_BY(mu_) = nullptr;  // For Stop() to cancel.
  Stats stats_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace nereid::kube
