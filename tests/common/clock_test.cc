#include <atomic>
#include <thread>

#include <catch2/catch.hpp>

#include "common/time/clock.h"
#include "common/time/fake_clock.h"
#include "common/time/wall_clock_steps.h"
#include "tests/fakes/eventually.h"

namespace nereid {
namespace {

TEST_CASE("FakeClock only moves when advanced") {
  FakeClock clock(absl::FromUnixSeconds(100));
  CHECK(clock.Now() == absl::FromUnixSeconds(100));
  clock.Advance(absl::Seconds(5));
  CHECK(clock.Now() == absl::FromUnixSeconds(105));
  clock.SetTime(absl::FromUnixSeconds(7));
  CHECK(clock.Now() == absl::FromUnixSeconds(7));
}

TEST_CASE("FakeClock wakes a timed waiter when time passes its deadline") {
  FakeClock clock;
  std::atomic<bool> woke{false};
  const absl::Time deadline = clock.Now() + absl::Hours(1);
  std::thread sleeper([&] {
    clock.SleepUntil(deadline);
    woke = true;
  });
  // Wait (bounded, in real time) until the sleeper is parked on the fake timer.
  fakes::Eventually([&] { return clock.timed_waiters() != 0; });
  REQUIRE(clock.timed_waiters() == 1);
  clock.Advance(absl::Minutes(59));
  CHECK_FALSE(woke.load());  // Not yet: one minute of fake time remains.
  clock.Advance(absl::Minutes(1));
  sleeper.join();
  CHECK(woke.load());
  CHECK(clock.timed_waiters() == 0);
}

TEST_CASE("AwaitWithDeadline returns true as soon as the condition holds") {
  FakeClock clock;
  absl::Mutex mu;
  bool ready = false;
  std::thread setter([&] {
    absl::MutexLock lock(&mu);
    ready = true;
  });
  absl::MutexLock lock(&mu);
  CHECK(clock.AwaitWithDeadline(&mu, absl::Condition(&ready), absl::InfiniteFuture()));
  mu.Unlock();
  setter.join();
  mu.Lock();
}

TEST_CASE("RealClock AwaitWithDeadline times out with the condition false") {
  absl::Mutex mu;
  bool never = false;
  absl::MutexLock lock(&mu);
  CHECK_FALSE(Clock::Real()->AwaitWithDeadline(&mu, absl::Condition(&never),
                                               absl::Now() + absl::Milliseconds(5)));
}

TEST_CASE("FakeClock::AwaitFor counts time that passes, not steps of the wall clock") {
  FakeClock clock;
  std::atomic<bool> woke{false};
  std::thread sleeper([&] {
    absl::Mutex mu;
    static const bool kNever = false;
    absl::MutexLock lock(&mu);
    clock.AwaitFor(&mu, absl::Condition(&kNever), absl::Seconds(60));
    woke = true;
  });
  REQUIRE(fakes::Eventually([&] { return clock.timed_waiters() == 1; }));
  clock.SetTime(clock.Now() + absl::Hours(1));  // a step forward: no time passed
  clock.SetTime(clock.Now() - absl::Hours(3));  // and back
  clock.Advance(absl::Seconds(59));
  CHECK_FALSE(fakes::Eventually([&] { return woke.load(); }, absl::Milliseconds(50)));
  clock.Advance(absl::Seconds(1));
  sleeper.join();
  CHECK(woke.load());
}

TEST_CASE("WallClockSteps measures backward steps and waits in bounded slices") {
  FakeClock clock;
  WallClockSteps steps(&clock, absl::Seconds(1));
  CHECK(steps.BackwardStep() == absl::ZeroDuration());
  clock.Advance(absl::Seconds(5));
  CHECK(steps.BackwardStep() == absl::ZeroDuration());
  clock.SetTime(clock.Now() + absl::Hours(1));
  CHECK(steps.BackwardStep() == absl::ZeroDuration());  // forward steps need nothing
  clock.SetTime(clock.Now() - absl::Hours(2));
  CHECK(steps.BackwardStep() == absl::Hours(2));
  CHECK(steps.BackwardStep() == absl::ZeroDuration());  // measured once

  // A deadline an hour away, the wall clock stepped back meanwhile: the wait still ends after a
  // slice, so the caller can look at the clock again.
  std::atomic<bool> returned{false};
  const absl::Time deadline = clock.Now() + absl::Hours(1);
  std::thread waiter([&] {
    absl::Mutex mu;
    static const bool kNever = false;
    absl::MutexLock lock(&mu);
    steps.AwaitUntil(&mu, absl::Condition(&kNever), deadline);
    returned = true;
  });
  REQUIRE(fakes::Eventually([&] { return clock.timed_waiters() == 1; }));
  clock.SetTime(clock.Now() - absl::Hours(5));
  clock.Advance(absl::Seconds(1));
  waiter.join();
  CHECK(returned.load());
}

}  // namespace
}  // namespace nereid
