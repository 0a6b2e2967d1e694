#include "common/kube/retry.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "common/kube/errors.h"
#include "common/time/fake_clock.h"
#include "tests/fakes/eventually.h"

namespace nereid::kube {
namespace {

// Waits (bounded) until `fn` has been called `calls` times and the retry loop sleeps on the clock.
bool WaitForWaiter(FakeClock& clock, const std::atomic<int>& counter, int calls) {
  return fakes::Eventually([&] { return clock.timed_waiters() != 0 && counter.load() == calls; });
}

absl::Status Conflict() { return ConflictError("pods", "p1", "the object has been modified"); }

RetryBackoff NoJitter(RetryBackoff backoff) {
  backoff.uniform01 = [] { return 0.5; };  // Factor 1.0: exact delays.
  return backoff;
}

TEST_CASE("RetryOnConflict retries conflicts with the default 10 ms delay", "[retry]") {
  FakeClock clock;
  std::atomic<int> calls{0};
  const absl::Time start = clock.Now();
  auto result = std::async(std::launch::async, [&] {
    return RetryOnConflict(
        [&]() -> absl::Status { return calls.fetch_add(1) < 2 ? Conflict() : absl::OkStatus(); },
        &clock, NoJitter(DefaultRetry()));
  });
  for (int i = 0; i < 2; ++i) {
    REQUIRE(WaitForWaiter(clock, calls, i + 1));
    clock.Advance(absl::Milliseconds(10));
  }
  REQUIRE(result.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
  CHECK(result.get().ok());
  CHECK(calls.load() == 3);
  CHECK(clock.Now() - start == absl::Milliseconds(20));
}

TEST_CASE("RetryOnConflict gives up after the configured steps with the last conflict", "[retry]") {
  FakeClock clock;
  std::atomic<int> calls{0};
  auto result = std::async(std::launch::async, [&] {
    return RetryOnConflict([&]() -> absl::Status { calls.fetch_add(1); return Conflict(); }, &clock,
                           NoJitter(DefaultRetry()));
  });
  for (int i = 0; i < 4; ++i) {  // 5 attempts, 4 waits.
    REQUIRE(WaitForWaiter(clock, calls, i + 1));
    clock.Advance(absl::Milliseconds(10));
  }
  REQUIRE(result.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
  absl::Status status = result.get();
  CHECK(IsConflict(status));
  CHECK(calls.load() == 5);
}

TEST_CASE("RetryOnConflict returns other errors at once", "[retry]") {
  FakeClock clock;
  int calls = 0;
  absl::Status status = RetryOnConflict(
      [&]() -> absl::Status {
        ++calls;
        return NotFoundError("pods", "p1");
      },
      &clock);
  CHECK(absl::IsNotFound(status));
  CHECK(calls == 1);
  CHECK(clock.timed_waiters() == 0);
}

TEST_CASE("RetryOnConflict with a value and jittered growing backoff", "[retry]") {
  FakeClock clock;
  RetryBackoff backoff = DefaultBackoff();  // 4 steps, 10 ms x5.
  backoff.uniform01 = [] { return 1.0; };   // The top of the jitter range: +10 %.
  std::atomic<int> calls{0};
  const absl::Time start = clock.Now();
  auto result = std::async(std::launch::async, [&] {
    return RetryOnConflict<int>(
        [&]() -> absl::StatusOr<int> {
          int n = calls.fetch_add(1);
          if (n < 2) return Conflict();
          return 42;
        },
        &clock, backoff);
  });
  REQUIRE(WaitForWaiter(clock, calls, 1));
  clock.Advance(absl::Milliseconds(10));  // Jitter made it 11 ms: still waiting.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(calls.load() == 1);
  clock.Advance(absl::Microseconds(1001));
  REQUIRE(WaitForWaiter(clock, calls, 2));
  clock.Advance(absl::Milliseconds(54));  // Less than 50 ms x1.1: still waiting.
  CHECK(result.wait_for(std::chrono::milliseconds(20)) == std::future_status::timeout);
  clock.Advance(absl::Microseconds(1001));
  REQUIRE(result.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
  absl::StatusOr<int> value = result.get();
  REQUIRE(value.ok());
  CHECK(*value == 42);
  CHECK(calls.load() == 3);
  CHECK(clock.Now() - start < absl::Milliseconds(67));
}

TEST_CASE("RetryOnError with a custom predicate", "[retry]") {
  FakeClock clock;
  RetryBackoff backoff = NoJitter(DefaultRetry());
  backoff.steps = 1;
  int calls = 0;
  absl::Status status = RetryOnError(
      backoff, &clock, [](const absl::Status& s) { return absl::IsUnavailable(s); },
      [&]() -> absl::Status {
        ++calls;
        return absl::UnavailableError("x");
      });
  CHECK(absl::IsUnavailable(status));
  CHECK(calls == 1);  // One step: no retry.
}

}  // namespace
}  // namespace nereid::kube
