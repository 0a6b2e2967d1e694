#include <catch2/catch.hpp>

#include "common/time/backoff.h"
#include "common/time/fake_clock.h"
#include "common/time/token_bucket.h"

namespace nereid {
namespace {

TEST_CASE("client-go reflector backoff: 0.8 s doubling to 30 s, reset") {
  ExponentialBackoff backoff({absl::Milliseconds(800), 2.0, absl::Seconds(30), 0.0});
  CHECK(backoff.Next() == absl::Milliseconds(800));
  CHECK(backoff.Next() == absl::Milliseconds(1600));
  CHECK(backoff.Next() == absl::Milliseconds(3200));
  for (int i = 0; i < 20; ++i) backoff.Next();
  CHECK(backoff.Next() == absl::Seconds(30));
  backoff.Reset();
  CHECK(backoff.Next() == absl::Milliseconds(800));
}

TEST_CASE("gRPC-style backoff stays within ±20 % jitter and the cap") {
  double r = 0.0;
  ExponentialBackoff backoff({absl::Seconds(1), 1.6, absl::Seconds(120), 0.2}, [&] { return r; });
  CHECK(backoff.Next() == absl::Milliseconds(800));  // r=0 → factor 0.8
  r = 0.999999;
  absl::Duration second = backoff.Next();  // 1.6 s × ~1.2
  CHECK(second > absl::Milliseconds(1919));
  CHECK(second <= absl::Milliseconds(1920));
  for (int i = 0; i < 50; ++i) CHECK(backoff.Next() <= absl::Seconds(120));
}

TEST_CASE("workqueue per-item backoff: 5 ms · 2^n up to 1000 s without overflow") {
  ExponentialBackoff backoff({absl::Milliseconds(5), 2.0, absl::Seconds(1000), 0.0});
  CHECK(backoff.Next() == absl::Milliseconds(5));
  CHECK(backoff.Next() == absl::Milliseconds(10));
  for (int i = 0; i < 5000; ++i) backoff.Next();
  CHECK(backoff.Next() == absl::Seconds(1000));
}

TEST_CASE("token bucket: burst, then qps") {
  FakeClock clock;
  TokenBucket bucket(10.0, 100, &clock);
  for (int i = 0; i < 100; ++i) REQUIRE(bucket.TryAcquire());
  CHECK_FALSE(bucket.TryAcquire());
  clock.Advance(absl::Milliseconds(100));
  CHECK(bucket.TryAcquire());
  CHECK_FALSE(bucket.TryAcquire());
  // Reservations queue: the first waits 100 ms, the next 200 ms.
  CHECK(bucket.Reserve() == absl::Milliseconds(100));
  CHECK(bucket.Reserve() == absl::Milliseconds(200));
  clock.Advance(absl::Seconds(100));
  for (int i = 0; i < 100; ++i) REQUIRE(bucket.TryAcquire());  // Refill is capped at burst.
  CHECK_FALSE(bucket.TryAcquire());
}

}  // namespace
}  // namespace nereid
