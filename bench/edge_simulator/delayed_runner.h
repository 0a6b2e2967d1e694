#pragma once

// Runs callbacks after a delay on one thread: the simulator's report resends (after a RETRY) and
// reconnects. Tasks still waiting at Stop() are dropped, so whatever they point at may be
// destroyed after Stop() returns.

#include <functional>
#include <map>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace nereid::bench {

class DelayedRunner {
 public:
  DelayedRunner();
  ~DelayedRunner();  // Stop()
  DelayedRunner(const DelayedRunner&) = delete;
  DelayedRunner& operator=(const DelayedRunner&) = delete;

  // Runs `task` on the runner's thread once `delay` has passed; ignored after Stop().
  void After(absl::Duration delay, std::function<void()> task);
  // Drops waiting tasks, waits for a running one, joins the thread. Idempotent.
  void Stop();

 private:
  void Loop();

  absl::Mutex mu_;
  absl::CondVar changed_;  // A task was added, or Stop().
  std::multimap<absl::Time, std::function<void()>> tasks_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace nereid::bench
