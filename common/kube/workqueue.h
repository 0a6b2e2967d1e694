#pragma once

// WorkQueue: client-go's rate-limiting delaying workqueue (util/workqueue/queue.go,
// delaying_queue.go, rate_limiting_queue.go) for string keys ("namespace/name").
//
// Guarantees, as client-go:
//   - Fair: keys are handed out in the order they were added (FIFO).
//   - Stingy: a key added again while it is still queued is queued once; a key is never handed to
//     two workers at once — while a worker holds it (between Get and Done), adds only mark it dirty
//     and it is queued again when Done is called.
//   - AddAfter(key, d) queues the key once d has passed on the injected Clock; a key waiting twice
//     keeps the earlier time. There is no timer thread: Get() sleeps on the Clock until the
//     earliest waiting key is due, so FakeClock::Advance drives delays in tests.
//   - AddLowPriority(key) queues a key whose add is not news (a periodic resync re-delivering an
//     unchanged object) behind every key added otherwise: it is handed out only when no other key
//     is ready, and an Add of it while it waits moves it forward. A resync of 100,000 cached
//     objects then does not hold a fresh change for seconds (bench/RESULTS.md, "10,000 nodes on
//     the product's build"); controller-runtime's priority queue gives unchanged updates a low
//     priority the same way. A low key can wait as long as other keys keep coming: under such load
//     a resync could not catch up anyway.
//   - AddRateLimited(key) = AddAfter(key, rate_limiter.When(key)); Forget(key) resets its backoff;
//     NumRequeues(key) counts its rate-limited adds since the last Forget.
//   - Metrics as client-go's: the time from a key's add to a worker taking it (queue duration)
//     goes to the wait observer, if one is set.
//   - ShutDown: adds are ignored and waiting (delayed) keys dropped; Get keeps handing out what is
//     queued and returns nullopt once the queue is empty. ShutDownWithDrain additionally blocks
//     until every key handed out has been marked Done.
// Thread-safe.

#include <cstdint>
#include <functional>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/kube/rate_limiter.h"
#include "common/time/clock.h"

namespace nereid::kube {

class WorkQueue {
 public:
  struct Options {
    std::string name;        // For logs and metrics.
    Clock* clock = nullptr;  // nullptr: the real clock.
    // nullptr: DefaultControllerRateLimiter(clock).
    std::unique_ptr<RateLimiter> rate_limiter;
  };
  struct Metrics {
    size_t depth = 0;       // Keys queued and ready.
    size_t waiting = 0;     // Keys waiting for their AddAfter time.
    size_t processing = 0;  // Keys handed out and not yet Done.
    int64_t adds = 0;       // Adds that queued a key (collapsed duplicates not counted).
    int64_t retries = 0;    // AddRateLimited calls.
  };

  WorkQueue();
  explicit WorkQueue(Options options);
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  void Add(const std::string& key);
  void AddLowPriority(const std::string& key);
  void AddAfter(const std::string& key, absl::Duration delay);
  void AddRateLimited(const std::string& key);
  void Forget(const std::string& key);
  int NumRequeues(const std::string& key);

  // Blocks until a key is ready and hands it to the caller, who must call Done(key) when finished.
  // Returns nullopt once the queue is shut down and empty.
  std::optional<std::string> Get();
  void Done(const std::string& key);

  void ShutDown();
  void ShutDownWithDrain();
  bool ShuttingDown() const;

  // Keys ready to be handed out (delayed keys that are due count).
  size_t Len();
  Metrics GetMetrics();
  const std::string& name() const { return name_; }

  // Called outside the queue's lock, on the worker's thread, with the time each key spent queued
  // before Get handed it out (from the add that queued it; a key added while being processed
  // waits from that add). Null stops the observation.
  using WaitObserver = std::function<void(absl::Duration)>;
  void SetWaitObserver(WaitObserver observer);

 private:
  using WaitingId = std::pair<absl::Time, uint64_t>;  // (ready time, insertion order)

  // `now`: the time the key counts as added (for the wait observer); `low`: AddLowPriority.
  void AddLocked(const std::string& key, absl::Time now, bool low = false)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The next low-priority key that may be handed out, taken off its lane; nullopt if none.
  std::optional<std::string> PopLowLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Get's work: waits for a ready key (or shutdown and empty: nullopt).
  std::optional<std::string> NextLocked(absl::Duration* waited) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Moves waiting keys whose time has come into the queue.
  void PromoteReadyLocked(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ShutDownLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string name_;
  Clock* const clock_;
  const std::unique_ptr<RateLimiter> rate_limiter_;

  mutable absl::Mutex mu_;
  std::deque<std::string> queue_ ABSL_GUARDED_BY(mu_);
  // The low-priority lane. An entry counts only while its key is in low_keys_ and not being
  // processed; entries of keys moved forward by an Add stay behind and are skipped.
  std::deque<std::string> low_ ABSL_GUARDED_BY(mu_);
  // Dirty keys all of whose adds were low priority (queued in low_, or processing and to be
  // queued there again at Done).
  std::unordered_set<std::string> low_keys_ ABSL_GUARDED_BY(mu_);
  size_t low_ready_ ABSL_GUARDED_BY(mu_) = 0;  // Live entries of low_.
  std::unordered_set<std::string> dirty_ ABSL_GUARDED_BY(mu_);       // Needs processing.
  std::unordered_set<std::string> processing_ ABSL_GUARDED_BY(mu_);  // Handed out, not Done.
  std::map<WaitingId, std::string> waiting_ ABSL_GUARDED_BY(mu_);
  std::unordered_map<std::string, WaitingId> waiting_ids_ ABSL_GUARDED_BY(mu_);
  uint64_t waiting_seq_ ABSL_GUARDED_BY(mu_) = 0;
  // Bumped whenever a waiting key is added, so sleeping Get() calls recompute their deadline.
  uint64_t waiting_generation_ ABSL_GUARDED_BY(mu_) = 0;
  bool shutting_down_ ABSL_GUARDED_BY(mu_) = false;
  int64_t adds_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t retries_ ABSL_GUARDED_BY(mu_) = 0;
  std::unordered_map<std::string, absl::Time> added_at_ ABSL_GUARDED_BY(mu_);  // dirty keys
  std::shared_ptr<const WaitObserver> wait_observer_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nereid::kube
