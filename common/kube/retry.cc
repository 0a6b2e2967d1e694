#include "common/kube/retry.h"

#include "common/kube/errors.h"
#include "common/log/log.h"
#include "common/time/backoff.h"

namespace nereid::kube {

RetryBackoff DefaultRetry() { return RetryBackoff{}; }

RetryBackoff DefaultBackoff() {
  RetryBackoff backoff;
  backoff.steps = 4;
  backoff.factor = 5.0;
  return backoff;
}

absl::Status RetryOnError(const RetryBackoff& backoff, Clock* clock,
                          const std::function<bool(const absl::Status&)>& retriable,
                          const std::function<absl::Status()>& fn) {
  ExponentialBackoff delays({.initial = backoff.duration,
                             .multiplier = backoff.factor,
                             .max = backoff.cap,
                             .jitter = backoff.jitter},
                            backoff.uniform01);
  const int attempts = backoff.steps > 0 ? backoff.steps : 1;
  absl::Status last;
  for (int attempt = 1; attempt <= attempts; ++attempt) {
    last = fn();
    if (last.ok() || !retriable(last)) return last;
    if (attempt == attempts) break;
    const absl::Duration wait = delays.Next();
    LOG(DEBUG) << "retriable error (attempt " << attempt << " of " << attempts
               << "), retrying in " << wait << ": " << last.message();
    clock->SleepFor(wait);
  }
  return last;
}

absl::Status RetryOnConflict(const std::function<absl::Status()>& fn, Clock* clock,
                             const RetryBackoff& backoff) {
  return RetryOnError(backoff, clock, [](const absl::Status& s) { return IsConflict(s); }, fn);
}

}  // namespace nereid::kube
