#include <atomic>
#include <chrono>
#include <thread>

#include <catch2/catch.hpp>

#include "common/time/clock.h"
#include "common/time/fake_clock.h"
#include "common/time/monotonic_waker.h"
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

TEST_CASE("RealClock AwaitFor times out, or returns as soon as the condition holds") {
  absl::Mutex mu;
  bool ready = false;
  absl::MutexLock lock(&mu);
  const absl::Time start = absl::Now();
  CHECK_FALSE(Clock::Real()->AwaitFor(&mu, absl::Condition(&ready), absl::Milliseconds(30)));
  CHECK(absl::Now() - start >= absl::Milliseconds(30));
  std::thread setter([&] {
    absl::MutexLock set(&mu);
    ready = true;
  });
  CHECK(Clock::Real()->AwaitFor(&mu, absl::Condition(&ready), absl::InfiniteDuration()));
  mu.Unlock();
  setter.join();
  mu.Lock();
}

// A wall clock stepped back during a wait cannot be staged here (the machine's clock is not ours
// to change); what it would leave is a waiter whose abseil deadline lies far ahead. Such a waiter,
// here one with no deadline at all, wakes through the waker once the steady deadline passes.
TEST_CASE("MonotonicWaker ends a wait that abseil's own deadline would not") {
  using std::chrono::steady_clock;
  absl::Mutex mu;
  const steady_clock::time_point deadline = steady_clock::now() + std::chrono::milliseconds(100);
  struct Due {
    steady_clock::time_point deadline;
    bool Over() const { return steady_clock::now() >= deadline; }
  } due{deadline};
  MonotonicWaker& waker = MonotonicWaker::Get();
  absl::MutexLock lock(&mu);
  const uint64_t id = waker.Register(&mu, deadline);
  // Bounded: should the waker fail, abseil gives up after 10 s and the checks below fail.
  const bool woke = mu.AwaitWithTimeout(absl::Condition(&due, &Due::Over), absl::Seconds(10));
  const auto late = steady_clock::now() - deadline;
  waker.Unregister(id);
  CHECK(woke);
  CHECK(late < std::chrono::seconds(2));
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
