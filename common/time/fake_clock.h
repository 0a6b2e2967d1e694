#pragma once

// A Clock that only moves when told to, for deterministic tests of time-driven behaviour.
// Waiters blocked in AwaitWithDeadline wake as soon as Advance() moves time past their deadline.
// Advance() is time passing; SetTime() is a step of the wall clock (NTP, an operator): it moves
// Now() but no time passes, so AwaitFor() waiters go on waiting — as on a real machine.

#include <atomic>

#include "common/time/clock.h"

namespace nereid {

class FakeClock final : public Clock {
 public:
  explicit FakeClock(absl::Time start = absl::FromUnixSeconds(1'700'000'000));

  absl::Time Now() const override;
  bool AwaitWithDeadline(absl::Mutex* mu, const absl::Condition& cond, absl::Time deadline) override
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  bool AwaitFor(absl::Mutex* mu, const absl::Condition& cond, absl::Duration timeout) override
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);

  void Advance(absl::Duration duration);
  void SetTime(absl::Time time);

  // Number of threads currently blocked in AwaitWithDeadline with a finite deadline or in AwaitFor
  // with a finite timeout; lets a test
  // wait until a component is parked on a timer before advancing time.
  int timed_waiters() const { return timed_waiters_.load(); }

 private:
  // Waits until `done()` with `mu` held, re-checking every kRecheckInterval of real time.
  template <typename Done>
  bool Await(absl::Mutex* mu, const absl::Condition& cond, bool timed, Done done)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);

  std::atomic<int64_t> now_ns_;
  std::atomic<int64_t> elapsed_ns_{0};  // time passed: Advance() only
  std::atomic<int> timed_waiters_{0};
};

}  // namespace nereid
