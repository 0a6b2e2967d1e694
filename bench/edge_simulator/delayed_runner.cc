#include "bench/edge_simulator/delayed_runner.h"

#include <utility>

namespace nereid::bench {

DelayedRunner::DelayedRunner() : thread_([this] { Loop(); }) {}

DelayedRunner::~DelayedRunner() { Stop(); }

void DelayedRunner::After(absl::Duration delay, std::function<void()> task) {
  absl::MutexLock lock(&mu_);
  if (stopping_) return;
  tasks_.emplace(absl::Now() + delay, std::move(task));
  changed_.Signal();
}

void DelayedRunner::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    tasks_.clear();
    changed_.Signal();
  }
  if (thread_.joinable()) thread_.join();
}

void DelayedRunner::Loop() {
  absl::MutexLock lock(&mu_);
  while (!stopping_) {
    if (tasks_.empty()) {
      changed_.Wait(&mu_);
      continue;
    }
    const absl::Time due = tasks_.begin()->first;
    if (absl::Now() < due) {
      // Woken early by a sooner task or Stop(); the loop re-reads the front.
      changed_.WaitWithDeadline(&mu_, due);
      continue;
    }
    std::function<void()> task = std::move(tasks_.begin()->second);
    tasks_.erase(tasks_.begin());
    mu_.Unlock();
    task();
    mu_.Lock();
  }
}

}  // namespace nereid::bench
