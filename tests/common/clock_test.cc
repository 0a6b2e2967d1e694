#include <atomic>
#include <thread>

#include <catch2/catch.hpp>

#include "common/time/clock.h"
#include "common/time/fake_clock.h"
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

}  // namespace
}  // namespace nereid
