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

template <typename Done>
bool FakeClock::Await(absl::Mutex* mu, const absl::Condition& cond, bool timed, Done done) {
  if (timed) timed_waiters_.fetch_add(1);
  bool result = false;
  while (true) {
    if (cond.Eval()) {
      result = true;
      break;
    }
    if (done()) break;
    mu->AwaitWithTimeout(cond, kRecheckInterval);
  }
  if (timed) timed_waiters_.fetch_sub(1);
  return result;
}

bool FakeClock::AwaitWithDeadline(absl::Mutex* mu, const absl::Condition& cond,
                                  absl::Time deadline) {
  return Await(mu, cond, deadline != absl::InfiniteFuture(),
               [&] { return Now() >= deadline; });
}

bool FakeClock::AwaitFor(absl::Mutex* mu, const absl::Condition& cond, absl::Duration timeout) {
  if (timeout == absl::InfiniteDuration()) {
    return AwaitWithDeadline(mu, cond, absl::InfiniteFuture());
  }
  const int64_t end = elapsed_ns_.load() + absl::ToInt64Nanoseconds(timeout);
  return Await(mu, cond, /*timed=*/true, [&] { return elapsed_ns_.load() >= end; });
}

void FakeClock::Advance(absl::Duration duration) {
  now_ns_.fetch_add(absl::ToInt64Nanoseconds(duration));
  elapsed_ns_.fetch_add(absl::ToInt64Nanoseconds(duration));
}

void FakeClock::SetTime(absl::Time time) { now_ns_.store(absl::ToUnixNanos(time)); }

}  // namespace nereid
