#pragma once

// Controller: N worker threads draining a WorkQueue into a Reconciler (sample-controller's
// processNextWorkItem + controller-runtime's reconcileHandler).
//
// What a Reconcile outcome does with the key:
//   error (not NotFound)      → AddRateLimited (per-key exponential backoff, overall token bucket)
//   NotFound error            → Forget: the object is gone, the work for it is over
//   requeue_after > 0         → Forget, then AddAfter(requeue_after)
//   requeue                   → AddRateLimited
//   success                   → Forget
// A reconciler that throws is treated as an error (logged, retried rate-limited): C++ has no
// panics, and one bad object must not take the daemon down.
//
// Reconcile is level-based: it gets only a key, reads the current state from listers, and must be
// idempotent. The workqueue guarantees a key is never reconciled by two workers at once.
//
// Lifetimes: an informer holding EnqueueHandler() calls into the controller, and a reconciler
// reading a lister reads the informer. Shut down in this order: informers Stop(), controllers
// Stop(), then destroy either.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/kube/event_handler.h"
#include "common/kube/rate_limiter.h"
#include "common/kube/shared_informer.h"
#include "common/kube/workqueue.h"
#include "common/time/clock.h"

namespace nereid::kube {

struct ReconcileResult {
  bool requeue = false;
  absl::Duration requeue_after = absl::ZeroDuration();
};

class Reconciler {
 public:
  virtual ~Reconciler() = default;
  // `key` is "namespace/name" (or "name" for cluster-scoped objects).
  virtual absl::StatusOr<ReconcileResult> Reconcile(const std::string& key) = 0;
};

struct ControllerOptions {
  int workers = 1;         // controller-runtime's MaxConcurrentReconciles default.
  Clock* clock = nullptr;  // nullptr: the real clock.
  std::unique_ptr<RateLimiter> rate_limiter;  // nullptr: DefaultControllerRateLimiter.
  absl::Duration cache_sync_timeout = absl::Minutes(2);
};

class Controller {
 public:
  struct Stats {
    int64_t reconciles = 0;
    int64_t errors = 0;    // Errors and exceptions (each retried rate-limited).
    int64_t requeues = 0;  // requeue or requeue_after results.
  };

  Controller(std::string name, Reconciler* reconciler, ControllerOptions options = {});
  ~Controller();
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  WorkQueue& queue() { return queue_; }
  // `resync`: the add is a resync's, no news (IsResync): the key waits behind every other.
  void Enqueue(const std::string& key, bool resync = false);

  // Handlers for SharedInformer::AddEventHandler that only enqueue.
  // The object's own key (adds, updates, deletes and tombstones alike).
  ResourceEventHandlerFuncs EnqueueHandler();
  // The key of the object's controller owner when that owner is of `owner_kind` (e.g. pods owned
  // by a job enqueue the job). Objects without such an owner are ignored.
  ResourceEventHandlerFuncs EnqueueOwnerHandler(std::string owner_kind);

  // Waits for the informers to sync (up to cache_sync_timeout on the clock), then starts the
  // workers. DeadlineExceeded if the caches did not sync; then no worker was started.
  absl::Status Start(const std::vector<SharedInformer*>& wait_for = {});
  // Shuts the queue down and joins the workers (each finishes the key it holds; keys still queued
  // are handed out and reconciled first, as client-go does).
  void Stop();

  Stats GetStats() const;
  const std::string& name() const { return name_; }

 private:
  void Worker(int index);
  // One key: Get, Reconcile, then Forget/AddRateLimited/AddAfter and Done. False on shutdown.
  bool ProcessNextWorkItem();

  const std::string name_;
  Reconciler* const reconciler_;
  Clock* const clock_;
  const int workers_;
  const absl::Duration cache_sync_timeout_;
  WorkQueue queue_;

  mutable absl::Mutex mu_;
  std::vector<std::thread> threads_ ABSL_GUARDED_BY(mu_);
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  Stats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nereid::kube
