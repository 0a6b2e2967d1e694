#pragma once

// Events expire, as in kube-apiserver (`--event-ttl`, default one hour), so that a long run (the
// soak, a day of development) does not keep every Event it ever recorded. kube-apiserver attaches
// an etcd lease to each Event write; here a sweep deletes Events whose last occurrence
// (lastTimestamp, series.lastObservedTime or eventTime, else creationTimestamp) is older than the
// TTL. Deletions are ordinary: watchers see DELETED.

#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "tools/devapiserver/registry.h"
#include "tools/devapiserver/storage.h"

namespace nereid::devapi {

class EventExpirer {
 public:
  EventExpirer(Store* store, const Registry* registry, absl::Duration ttl);
  ~EventExpirer();  // Stops the sweeper.
  EventExpirer(const EventExpirer&) = delete;
  EventExpirer& operator=(const EventExpirer&) = delete;

  // Sweeps every ttl/10 (between 1 s and 1 min) on the store's clock until destroyed.
  void Start();
  // Deletes every Event last seen before Now() - ttl; returns how many it deleted.
  int SweepOnce();

 private:
  void Run();

  Store* const store_;
  const Registry* const registry_;
  const absl::Duration ttl_;
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace nereid::devapi
