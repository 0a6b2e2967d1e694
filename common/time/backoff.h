#pragma once

// Exponential backoff with jitter, one implementation for every retry loop in Nereid:
//   watch/relist       0.8 s ×2 up to 30 s            (client-go reflector)
//   LC cloud link      1 s ×1.6 up to 120 s, ±20 %    (gRPC connection backoff)
//   workqueue item     5 ms ×2 up to 1000 s           (client-go ItemExponentialFailureRateLimiter)
// Not thread-safe: each retry loop owns its backoff.

#include <functional>

#include "absl/time/time.h"

namespace nereid {

class ExponentialBackoff {
 public:
  struct Options {
    absl::Duration initial = absl::Seconds(1);
    double multiplier = 2.0;
    absl::Duration max = absl::Seconds(30);
    // Each delay is scaled by a uniform factor in [1 - jitter, 1 + jitter], then capped at max.
    double jitter = 0.0;
  };

  // `uniform01` returns a value in [0, 1); defaults to a real random source. Tests pass a fixed one.
  explicit ExponentialBackoff(Options options, std::function<double()> uniform01 = nullptr);

  // The delay to wait before the next attempt; each call grows the following one.
  absl::Duration Next();
  // A uniformly random delay in [low, high] from this backoff's random source, for a delay
  // someone else bounded (a server's retry estimate), spread so that many clients told the same
  // do not come back at once; the attempts do not grow.
  absl::Duration UniformIn(absl::Duration low, absl::Duration high);
  // Back to the initial delay (after a healthy period).
  void Reset() { attempts_ = 0; }
  int attempts() const { return attempts_; }

 private:
  Options options_;
  std::function<double()> uniform01_;
  int attempts_ = 0;
};

}  // namespace nereid
