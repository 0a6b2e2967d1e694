#include "common/time/token_bucket.h"

#include <algorithm>

namespace nereid {

TokenBucket::TokenBucket(double qps, int burst, Clock* clock)
    : qps_(qps), burst_(std::max(1, burst)), clock_(clock), tokens_(burst_), last_(clock->Now()) {}

void TokenBucket::RefillLocked(absl::Time now) {
  if (now > last_) {
    tokens_ = std::min(burst_, tokens_ + absl::ToDoubleSeconds(now - last_) * qps_);
    last_ = now;
  }
}

bool TokenBucket::TryAcquire() {
  absl::MutexLock lock(&mu_);
  RefillLocked(clock_->Now());
  if (tokens_ < 1.0) return false;
  tokens_ -= 1.0;
  return true;
}

absl::Duration TokenBucket::Reserve() {
  absl::MutexLock lock(&mu_);
  RefillLocked(clock_->Now());
  tokens_ -= 1.0;  // May go negative: the debt is what later reservations wait out.
  if (tokens_ >= 0.0 || qps_ <= 0.0) return absl::ZeroDuration();
  return absl::Seconds(-tokens_ / qps_);
}

void TokenBucket::Acquire() {
  absl::Duration wait = Reserve();
  if (wait > absl::ZeroDuration()) clock_->SleepFor(wait);
}

}  // namespace nereid
