#pragma once

// Eventually(cond): waits (real time, bounded) for a condition another thread makes true. The one
// way tests wait for background threads: never a fixed sleep.

#include <functional>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace nereid::fakes {

inline bool Eventually(const std::function<bool()>& condition,
                       absl::Duration timeout = absl::Seconds(10)) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!condition()) {
    if (absl::Now() >= deadline) return false;
    absl::SleepFor(absl::Microseconds(200));
  }
  return true;
}

}  // namespace nereid::fakes
