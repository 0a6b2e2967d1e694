#include "common/time/monotonic_waker.h"

#include <algorithm>

namespace nereid {

MonotonicWaker& MonotonicWaker::Get() {
  static MonotonicWaker* const waker = [] {
    auto* w = new MonotonicWaker();  // never destroyed: waiters may exist until the process exits
    w->thread_ = std::thread([w] { w->Run(); });
    w->thread_.detach();
    return w;
  }();
  return *waker;
}

uint64_t MonotonicWaker::Register(absl::Mutex* mu, SteadyTime deadline) {
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t id = next_id_++;
  waits_.emplace(id, Wait{mu, deadline});
  changed_.notify_one();
  return id;
}

void MonotonicWaker::Unregister(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  waits_.erase(id);
}

void MonotonicWaker::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    const SteadyTime now = std::chrono::steady_clock::now();
    SteadyTime next = SteadyTime::max();
    for (auto& [id, wait] : waits_) {
      if (wait.deadline > now) {
        next = std::min(next, wait.deadline);
        continue;
      }
      // Registered waits are alive: a waiter unregisters (under mu_) before its mutex can go away.
      if (wait.mu->TryLock()) wait.mu->Unlock();
      next = std::min(next, now + kRepoke);
    }
    if (next == SteadyTime::max()) {
      changed_.wait(lock);
    } else {
      changed_.wait_until(lock, next);
    }
  }
}

}  // namespace nereid
