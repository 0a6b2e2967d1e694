#include "globalmanager/edgehub/recent_rate.h"

#include <catch2/catch.hpp>

#include "common/time/fake_clock.h"

namespace nereid::gm {
namespace {

TEST_CASE("RecentRate counts the events of the last window, over the part that saw events",
          "[edgehub][rate]") {
  FakeClock clock;
  RecentRate rate(&clock, /*window_seconds=*/10);
  CHECK(rate.Get().events == 0);
  CHECK(rate.Get().span == absl::ZeroDuration());

  rate.Add(20);
  CHECK(rate.Get().events == 20);
  CHECK(rate.Get().span == absl::Seconds(1));  // a burst that just began: not diluted over 10 s
  clock.Advance(absl::Seconds(3));
  rate.Add(10);
  CHECK(rate.Get().events == 30);
  CHECK(rate.Get().span == absl::Seconds(4));

  clock.Advance(absl::Seconds(8));  // the first 20 are 11 s old now
  CHECK(rate.Get().events == 10);
  CHECK(rate.Get().span == absl::Seconds(9));  // idle seconds since count: the rate decays
  clock.Advance(absl::Seconds(9));
  CHECK(rate.Get().events == 0);
  CHECK(rate.Get().span == absl::ZeroDuration());

  // The bucket of the first 20 serves this second now, from zero.
  rate.Add(5);
  CHECK(rate.Get().events == 5);
}

TEST_CASE("RecentRate ignores counts from the future after the clock steps back",
          "[edgehub][rate]") {
  FakeClock clock;
  RecentRate rate(&clock, 10);
  rate.Add(40);
  clock.SetTime(clock.Now() - absl::Seconds(30));
  CHECK(rate.Get().events == 0);
  rate.Add(10);
  CHECK(rate.Get().events == 10);
  CHECK(rate.Get().span == absl::Seconds(1));
}

}  // namespace
}  // namespace nereid::gm
