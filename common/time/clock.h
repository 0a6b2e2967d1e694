#pragma once

// The injectable clock. Everything in Nereid that waits or measures time (backoff, resync, lease
// renewal, TTLs, triggers) takes a Clock so tests drive time with a FakeClock instead of sleeping.

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace nereid {

class Clock {
 public:
  virtual ~Clock() = default;

  virtual absl::Time Now() const = 0;

  // With `mu` held: waits until `cond` holds or Now() >= deadline, releasing `mu` while waiting.
  // Returns whether `cond` holds. This is the one primitive timed waits are built on, so a fake
  // clock can wake waiters when it is advanced.
  virtual bool AwaitWithDeadline(absl::Mutex* mu, const absl::Condition& cond,
                                 absl::Time deadline) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) = 0;

  // With `mu` held: waits until `cond` holds or `timeout` has elapsed, measured as time that
  // passes, not as a Now() deadline: a step of the wall clock neither ends the wait nor stretches
  // it (RealClock: common/time/monotonic_waker.h). Returns whether `cond` holds.
  virtual bool AwaitFor(absl::Mutex* mu, const absl::Condition& cond, absl::Duration timeout)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    return AwaitWithDeadline(mu, cond, Now() + timeout);
  }

  // Sleeps until Now() >= deadline.
  void SleepUntil(absl::Time deadline);
  void SleepFor(absl::Duration duration) { SleepUntil(Now() + duration); }

  // The process-wide real clock.
  static Clock* Real();
};

class RealClock final : public Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
  bool AwaitWithDeadline(absl::Mutex* mu, const absl::Condition& cond, absl::Time deadline) override
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    return mu->AwaitWithDeadline(cond, deadline);
  }
  bool AwaitFor(absl::Mutex* mu, const absl::Condition& cond, absl::Duration timeout) override
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
};

}  // namespace nereid
