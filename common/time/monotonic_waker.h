#pragma once

// Ends timed waits on absl::Mutex by time that passes (CLOCK_MONOTONIC), whatever the wall clock
// does. abseil before 20230802 (Debian 12 ships 20220623) turns Mutex::AwaitWithTimeout into a
// CLOCK_REALTIME deadline, so stepping the wall clock back by an hour during a 1 s wait makes it
// last an hour and a second. A waiter registers its mutex and monotonic deadline here; once the
// deadline passes, one process-wide thread (sleeping on the steady clock) releases the mutex
// briefly, which makes absl::Mutex evaluate its waiters' conditions, and a waiter whose condition
// includes "the monotonic deadline has passed" wakes.
//
// The waker never blocks on a waiter's mutex (TryLock only): if someone holds it, their Unlock
// evaluates the waiters' conditions anyway. So a waiter may unregister while holding its mutex.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <thread>

#include "absl/synchronization/mutex.h"

namespace nereid {

class MonotonicWaker {
 public:
  using SteadyTime = std::chrono::steady_clock::time_point;

  // The process-wide waker; its thread starts on first use and is never joined (like the real
  // clock it serves, it lives as long as the process).
  static MonotonicWaker& Get();

  // While registered and after `deadline`, `mu` is released briefly every kRepoke until
  // Unregister. Returns the registration's id.
  uint64_t Register(absl::Mutex* mu, SteadyTime deadline);
  void Unregister(uint64_t id);

  static constexpr std::chrono::milliseconds kRepoke{50};

 private:
  MonotonicWaker() = default;
  void Run();

  struct Wait {
    absl::Mutex* mu;
    SteadyTime deadline;
  };
  std::mutex mu_;
  std::condition_variable changed_;  // waits on the steady clock (pthread_cond_clockwait)
  std::map<uint64_t, Wait> waits_;   // guarded by mu_
  uint64_t next_id_ = 1;             // guarded by mu_
  std::thread thread_;
};

}  // namespace nereid
