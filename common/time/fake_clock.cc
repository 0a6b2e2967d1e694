#include "common/time/fake_clock.h"

namespace nereid {
namespace {
// Real time between re-checks of a waiter's deadline against the fake time. Fake time lives in an
// atomic, not under the waiter's mutex, so a short real re-check interval is how waiters notice an
// Advance() without the clock having to know every waiter's mutex.
constexpr absl::Duration kRecheckInterval = absl::Milliseconds(1);
}  // namespace

FakeClock::FakeClock(absl::Time start) : now_ns_(absl::ToUnixNanos(start)) {}

absl::Time FakeClock::Now() const { return absl::FromUnixNanos(now_ns_.load()); }

bool FakeClock::AwaitWithDeadline(absl::Mutex* mu, const absl::Condition& cond,
                                  absl::Time deadline) {
  const bool timed = deadline != absl::InfiniteFuture();
  if (timed) timed_waiters_.fetch_add(1);
  bool result = false;
  while (true) {
    if (cond.Eval()) {
      result = true;
      break;
    }
    if (Now() >= deadline) break;
    mu->AwaitWithTimeout(cond, kRecheckInterval);
  }
  if (timed) timed_waiters_.fetch_sub(1);
  return result;
}

void FakeClock::Advance(absl::Duration duration) {
  now_ns_.fetch_add(absl::ToInt64Nanoseconds(duration));
}

void FakeClock::SetTime(absl::Time time) { now_ns_.store(absl::ToUnixNanos(time)); }

}  // namespace nereid
