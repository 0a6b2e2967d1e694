#include "common/time/clock.h"

#include <chrono>

#include "common/time/monotonic_waker.h"

namespace nereid {

void Clock::SleepUntil(absl::Time deadline) {
  static const bool kNever = false;
  absl::Mutex mu;
  absl::MutexLock lock(&mu);
  AwaitWithDeadline(&mu, absl::Condition(&kNever), deadline);
}

bool RealClock::AwaitFor(absl::Mutex* mu, const absl::Condition& cond, absl::Duration timeout) {
  if (cond.Eval()) return true;
  using std::chrono::steady_clock;
  struct Wait {
    const absl::Condition* cond;
    steady_clock::time_point deadline;
    bool Over() const { return cond->Eval() || steady_clock::now() >= deadline; }
  };
  const steady_clock::time_point now = steady_clock::now();
  const Wait wait{&cond, timeout >= absl::Hours(24 * 365 * 100)
                             ? steady_clock::time_point::max()
                             : now + absl::ToChronoNanoseconds(timeout)};
  const absl::Condition over(&wait, &Wait::Over);
  // abseil's own timeout ends the wait when the wall clock keeps time; the waker ends it when the
  // wall clock went back. A wall clock that jumped forward ends abseil's wait early: wait again.
  MonotonicWaker& waker = MonotonicWaker::Get();
  const uint64_t id = waker.Register(mu, wait.deadline);
  while (!mu->AwaitWithTimeout(over, absl::FromChrono(wait.deadline - steady_clock::now()))) {
  }
  waker.Unregister(id);
  return cond.Eval();
}

Clock* Clock::Real() {
  static RealClock clock;
  return &clock;
}

}  // namespace nereid
