#include "common/time/wall_clock_steps.h"

#include <algorithm>

namespace nereid {

absl::Duration WallClockSteps::BackwardStep() {
  const absl::Time now = clock_->Now();
  const absl::Duration back = now < last_ ? last_ - now : absl::ZeroDuration();
  last_ = now;
  return back;
}

bool WallClockSteps::AwaitUntil(absl::Mutex* mu, const absl::Condition& cond,
                                absl::Time deadline) {
  if (deadline == absl::InfiniteFuture()) {
    return clock_->AwaitWithDeadline(mu, cond, absl::InfiniteFuture());
  }
  const absl::Duration left = std::max(deadline - clock_->Now(), absl::ZeroDuration());
  return clock_->AwaitFor(mu, cond, std::min(left, max_slice_));
}

}  // namespace nereid
