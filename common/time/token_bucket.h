#pragma once

// A token bucket (golang.org/x/time/rate semantics): `qps` tokens per second, at most `burst`
// stored. Used for the workqueue's overall retry limit (10 qps, burst 100) and the REST client's
// client-side QPS limit. Thread-safe; time comes from the injected Clock.

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/time/clock.h"

namespace nereid {

class TokenBucket {
 public:
  TokenBucket(double qps, int burst, Clock* clock);

  // Takes a token now if one is available.
  bool TryAcquire();
  // Reserves the next token and returns how long the caller must wait before using it (zero if
  // one is available now). Reservations queue up: each call pushes the next one further out.
  absl::Duration Reserve();
  // Reserve() and sleep on the clock until the token is ready.
  void Acquire();

 private:
  void RefillLocked(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const double qps_;
  const double burst_;
  Clock* const clock_;
  absl::Mutex mu_;
  double tokens_ ABSL_GUARDED_BY(mu_);
  absl::Time last_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nereid
