#pragma once

// client-go's k8s.io/client-go/util/retry: run a read-modify-write function again when it fails with
// a retriable error (409 Conflict for RetryOnConflict), waiting between attempts on the injected
// Clock, for a bounded number of attempts. `fn` must re-read the object on every attempt: a
// conflict means the copy it modified was stale.
//
//   absl::Status s = RetryOnConflict([&]() -> absl::Status {
//     ASSIGN_OR_RETURN(Json obj, client.Get(resources::Pods(), ns, name));
//     obj["metadata"]["labels"]["x"] = "y";
//     return client.Update(resources::Pods(), obj).status();
//   }, clock);

#include <functional>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/time/clock.h"

namespace nereid::kube {

// wait.Backoff: `steps` attempts in all, delays start at `duration` and grow by `factor`, each
// scaled by a random factor within ±`jitter` (common/time/backoff.h; client-go only jitters upward).
struct RetryBackoff {
  int steps = 5;
  absl::Duration duration = absl::Milliseconds(10);
  double factor = 1.0;
  double jitter = 0.1;
  absl::Duration cap = absl::InfiniteDuration();
  std::function<double()> uniform01;  // Random source in [0, 1); null: a real one. For tests.
};

// retry.DefaultRetry: 5 attempts, 10 ms apart (±10 %). For conflicts between controllers.
RetryBackoff DefaultRetry();
// retry.DefaultBackoff: 4 attempts, 10 ms ×5 (±10 %). For errors that need the server to recover.
RetryBackoff DefaultBackoff();

// retry.OnError: calls `fn` until it succeeds, fails with an error `retriable` rejects, or the
// attempts run out; then returns the last error.
absl::Status RetryOnError(const RetryBackoff& backoff, Clock* clock,
                          const std::function<bool(const absl::Status&)>& retriable,
                          const std::function<absl::Status()>& fn);

// retry.RetryOnConflict: RetryOnError with IsConflict.
absl::Status RetryOnConflict(const std::function<absl::Status()>& fn, Clock* clock = Clock::Real(),
                             const RetryBackoff& backoff = DefaultRetry());

// The same for a function that returns a value, e.g. the updated object.
template <typename T>
absl::StatusOr<T> RetryOnConflict(const std::function<absl::StatusOr<T>()>& fn,
                                  Clock* clock = Clock::Real(),
                                  const RetryBackoff& backoff = DefaultRetry()) {
  std::optional<T> value;
  absl::Status status = RetryOnConflict(
      [&]() -> absl::Status {
        absl::StatusOr<T> result = fn();
        if (!result.ok()) return result.status();
        value = *std::move(result);
        return absl::OkStatus();
      },
      clock, backoff);
  if (!status.ok()) return status;
  return *std::move(value);
}

}  // namespace nereid::kube
