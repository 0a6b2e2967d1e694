#pragma once

// Workqueue rate limiters (client-go util/workqueue/default_rate_limiters.go): they decide how long
// an item waits before it is retried. The default for controllers is the max of a per-item
// exponential backoff (5 ms·2ⁿ, capped at 1000 s) and an overall token bucket (10 qps, burst 100),
// so one failing item backs off on its own while a storm of failures is limited as a whole.
// All implementations are thread-safe.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/time/backoff.h"
#include "common/time/clock.h"
#include "common/time/token_bucket.h"

namespace nereid::kube {

class RateLimiter {
 public:
  virtual ~RateLimiter() = default;
  // How long `item` should wait now; counts as one more failure of it.
  virtual absl::Duration When(const std::string& item) = 0;
  // Stops tracking `item` (after it succeeded): its next failure starts from the initial delay.
  virtual void Forget(const std::string& item) = 0;
  // How many times `item` has been rate-limited since it was last forgotten.
  virtual int NumRequeues(const std::string& item) = 0;
};

// base·2ⁿ per item, n = failures so far, capped at `max`.
class ItemExponentialRateLimiter final : public RateLimiter {
 public:
  ItemExponentialRateLimiter(absl::Duration base, absl::Duration max);
  absl::Duration When(const std::string& item) override;
  void Forget(const std::string& item) override;
  int NumRequeues(const std::string& item) override;

 private:
  const ExponentialBackoff::Options options_;
  absl::Mutex mu_;
  std::map<std::string, ExponentialBackoff> failures_ ABSL_GUARDED_BY(mu_);
};

// An overall token bucket: each When() reserves the next token, whatever the item.
class BucketRateLimiter final : public RateLimiter {
 public:
  BucketRateLimiter(double qps, int burst, Clock* clock);
  absl::Duration When(const std::string& item) override { return bucket_.Reserve(); }
  void Forget(const std::string& item) override {}
  int NumRequeues(const std::string& item) override { return 0; }

 private:
  TokenBucket bucket_;
};

// The longest delay of its limiters; every limiter sees every call.
class MaxOfRateLimiter final : public RateLimiter {
 public:
  explicit MaxOfRateLimiter(std::vector<std::unique_ptr<RateLimiter>> limiters);
  absl::Duration When(const std::string& item) override;
  void Forget(const std::string& item) override;
  int NumRequeues(const std::string& item) override;

 private:
  std::vector<std::unique_ptr<RateLimiter>> limiters_;
};

// MaxOf(ItemExponential(5 ms, 1000 s), Bucket(10 qps, burst 100)), as client-go's
// DefaultTypedControllerRateLimiter.
std::unique_ptr<RateLimiter> DefaultControllerRateLimiter(Clock* clock);

}  // namespace nereid::kube
