#include "common/time/clock.h"

namespace nereid {

void Clock::SleepUntil(absl::Time deadline) {
  static const bool kNever = false;
  absl::Mutex mu;
  absl::MutexLock lock(&mu);
  AwaitWithDeadline(&mu, absl::Condition(&kNever), deadline);
}

Clock* Clock::Real() {
  static RealClock clock;
  return &clock;
}

}  // namespace nereid
