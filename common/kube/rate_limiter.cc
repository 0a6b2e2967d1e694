#include "common/kube/rate_limiter.h"

#include <algorithm>
#include <utility>

namespace nereid::kube {

ItemExponentialRateLimiter::ItemExponentialRateLimiter(absl::Duration base, absl::Duration max)
    : options_{.initial = base, .multiplier = 2.0, .max = max, .jitter = 0.0} {}

absl::Duration ItemExponentialRateLimiter::When(const std::string& item) {
  absl::MutexLock lock(&mu_);
  // No jitter, so no random source: constructing one per failing item would be wasted work.
  auto it = failures_.try_emplace(item, options_, [] { return 0.5; }).first;
  return it->second.Next();
}

void ItemExponentialRateLimiter::Forget(const std::string& item) {
  absl::MutexLock lock(&mu_);
  failures_.erase(item);
}

int ItemExponentialRateLimiter::NumRequeues(const std::string& item) {
  absl::MutexLock lock(&mu_);
  auto it = failures_.find(item);
  return it == failures_.end() ? 0 : it->second.attempts();
}

BucketRateLimiter::BucketRateLimiter(double qps, int burst, Clock* clock)
    : bucket_(qps, burst, clock) {}

MaxOfRateLimiter::MaxOfRateLimiter(std::vector<std::unique_ptr<RateLimiter>> limiters)
    : limiters_(std::move(limiters)) {}

absl::Duration MaxOfRateLimiter::When(const std::string& item) {
  absl::Duration longest = absl::ZeroDuration();
  for (auto& limiter : limiters_) longest = std::max(longest, limiter->When(item));
  return longest;
}

void MaxOfRateLimiter::Forget(const std::string& item) {
  for (auto& limiter : limiters_) limiter->Forget(item);
}

int MaxOfRateLimiter::NumRequeues(const std::string& item) {
  int most = 0;
  for (auto& limiter : limiters_) most = std::max(most, limiter->NumRequeues(item));
  return most;
}

std::unique_ptr<RateLimiter> DefaultControllerRateLimiter(Clock* clock) {
  std::vector<std::unique_ptr<RateLimiter>> limiters;
  limiters.push_back(
      std::make_unique<ItemExponentialRateLimiter>(absl::Milliseconds(5), absl::Seconds(1000)));
  limiters.push_back(std::make_unique<BucketRateLimiter>(10.0, 100, clock));
  return std::make_unique<MaxOfRateLimiter>(std::move(limiters));
}

}  // namespace nereid::kube
