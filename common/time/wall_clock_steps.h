#pragma once

// For a loop that schedules work at wall-clock times (Clock::Now()) and must not stall when the
// wall clock is stepped backward (NTP correcting a bad RTC, an operator, a VM resumed from a
// snapshot): a schedule of "now + 60 s" taken before a step back of an hour would otherwise wait an
// hour and a minute.
//   - AwaitUntil waits for a wall-clock deadline in slices of at most `max_slice` of time that
//     passes (Clock::AwaitFor), so the loop looks again within a slice instead of living the step
//     again;
//   - BackwardStep tells how far Now() went back since its previous call, and the loop moves every
//     time it scheduled back by as much (within a slice of the truth).
// A step forward needs nothing: what became due runs at once. Not thread-safe: one loop's state,
// used under that loop's lock.
//
//   absl::Duration back = steps.BackwardStep();
//   for (Job& j : jobs) j.next -= back;      // infinite times stay infinite
//   ...
//   steps.AwaitUntil(&mu_, absl::Condition(&wake_), earliest_next);

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/time/clock.h"

namespace nereid {

class WallClockSteps {
 public:
  explicit WallClockSteps(Clock* clock, absl::Duration max_slice = absl::Seconds(1))
      : clock_(clock), max_slice_(max_slice), last_(clock->Now()) {}

  // How far Now() went back since the previous call (or construction); zero when it did not.
  absl::Duration BackwardStep();

  // With `mu` held: waits until `cond` holds, Now() reaches `deadline`, or `max_slice` passes;
  // returns whether `cond` holds. An infinite deadline waits for `cond` alone.
  bool AwaitUntil(absl::Mutex* mu, const absl::Condition& cond, absl::Time deadline)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);

 private:
  Clock* const clock_;
  const absl::Duration max_slice_;
  absl::Time last_;
};

}  // namespace nereid
