#pragma once

// SharedInformer: a reflector feeding an indexed cache, plus handlers told about every change
// (client-go tools/cache shared_informer.go). One informer per (resource, namespace, selectors);
// any number of handlers and listers share it.
//
// Threads: the reflector's (list/watch, applies changes to the cache) and the dispatcher's (runs
// handlers). The cache is updated before handlers hear of a change, so a handler's key is always
// found by a lister read that happens after it — unless the object was deleted again since.
//
//   - a relist (after 410 Gone) turns into OnAdd/OnUpdate for listed objects and, for objects that
//     vanished while the watch was down, OnDelete with a DeletedFinalStateUnknown tombstone;
//   - resync: every `resync_period` on the Clock (0 disables) every cached object is re-delivered
//     as OnUpdate(obj, obj) — a replay of the cache, not a relist (client-go semantics);
//   - HasSynced: the first list is in the cache and its notifications have been delivered.
//
// See event_handler.h for what handlers may do.

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/kube/client.h"
#include "common/kube/event_handler.h"
#include "common/kube/indexer.h"
#include "common/kube/lister.h"
#include "common/kube/reflector.h"
#include "common/kube/resource.h"
#include "common/time/clock.h"

namespace nereid::kube {

struct InformerOptions {
  std::string ns;  // "" = all namespaces.
  std::string label_selector;
  std::string field_selector;
  absl::Duration resync_period = absl::ZeroDuration();
  // Indexes in addition to kNamespaceIndex and kControllerUidIndex.
  Indexers indexers;
  // Unset: kDecoded, or the factory's policy for the resource.
  std::optional<CacheEncoding> cache_encoding;
  // Paging, watch timeout, backoff, the cache transform (cache_transform.h); its ns/selectors are
  // taken from the fields above.
  ReflectorOptions reflector;
};

class SharedInformer final : private ReflectorStore {
 public:
  SharedInformer(KubeClient* client, Resource resource, InformerOptions options = {},
                 Clock* clock = nullptr);
  ~SharedInformer() override;
  SharedInformer(const SharedInformer&) = delete;
  SharedInformer& operator=(const SharedInformer&) = delete;

  // A handler added after Start first receives OnAdd for every object already cached. Whatever a
  // handler refers to must outlive the informer, or the informer must be stopped first.
  void AddEventHandler(ResourceEventHandlerFuncs handler);
  absl::Status AddIndexers(Indexers indexers);

  void Start();
  // Stops the reflector, then the dispatcher; notifications not yet delivered are dropped.
  void Stop();

  bool HasSynced() const;
  // Waits until HasSynced (true) or `deadline` on the informer's Clock / Stop (false).
  bool WaitForSync(absl::Time deadline);

  Lister GetLister() const { return Lister(&indexer_, resource_); }
  const Indexer& GetIndexer() const { return indexer_; }
  const Resource& resource() const { return resource_; }
  std::string LastSyncResourceVersion() const { return reflector_->LastSyncResourceVersion(); }
  Reflector::Stats ReflectorStats() const { return reflector_->GetStats(); }

 private:
  struct Notification {
    // kResync: a resync's replay of `key`, with `object` read only for handlers without on_resync.
    enum class Kind { kAdd, kUpdate, kDelete, kSynced, kResync };
    Kind kind;
    ObjectPtr old_object;
    ObjectPtr object;
    DeletedObject deleted;
    std::string key = {};
    // Delivered to handlers_[first, end): handlers registered after it was queued do not get it.
    size_t first = 0;
    size_t end = 0;
  };

  // ReflectorStore, called on the reflector's thread.
  void Replace(std::vector<ObjectPtr> objects, const std::string& resource_version) override;
  void Add(ObjectPtr object) override;
  void Update(ObjectPtr object) override;
  void Delete(ObjectPtr object) override;

  void QueueLocked(Notification notification) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Dispatch();
  static void Deliver(const ResourceEventHandlerFuncs& handler, const Notification& notification);

  const Resource resource_;
  Clock* const clock_;
  const absl::Duration resync_period_;
  Indexer indexer_;
  std::unique_ptr<Reflector> reflector_;

  mutable absl::Mutex mu_;
  std::vector<std::shared_ptr<const ResourceEventHandlerFuncs>> handlers_ ABSL_GUARDED_BY(mu_);
  std::vector<Notification> pending_ ABSL_GUARDED_BY(mu_);
  bool sync_queued_ ABSL_GUARDED_BY(mu_) = false;
  bool synced_ ABSL_GUARDED_BY(mu_) = false;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  std::thread dispatcher_;
};

// Waits until every informer HasSynced, up to `deadline` (each informer's own Clock). Returns
// whether all synced.
bool WaitForCacheSync(const std::vector<SharedInformer*>& informers, absl::Time deadline);

}  // namespace nereid::kube
