#pragma once

// Eventually(cond): waits (real time, bounded) for a condition another thread or process makes
// true. The one way tests wait for background work: never a fixed sleep. `timeout` bounds the
// wait; `poll` is how often the condition is checked (raise it for a costly condition, such as an
// HTTP request to a child process). The condition is checked once more at the deadline.

#include <algorithm>
#include <functional>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace nereid::fakes {

inline bool Eventually(const std::function<bool()>& condition,
                       absl::Duration timeout = absl::Seconds(10),
                       absl::Duration poll = absl::Microseconds(200)) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    if (condition()) return true;
    const absl::Time now = absl::Now();
    if (now >= deadline) return false;
    absl::SleepFor(std::min(poll, deadline - now));
  }
}

}  // namespace nereid::fakes
