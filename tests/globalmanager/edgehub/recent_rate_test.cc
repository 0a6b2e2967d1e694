#include "globalmanager/edgehub/recent_rate.h"

#include <catch2/catch.hpp>

#include "common/time/fake_clock.h"

namespace nereid::gm {
namespace {

TEST_CASE("RecentRate counts the events of the last window only", "[edgehub][rate]") {
  FakeClock clock;
  RecentRate rate(&clock, /*window_seconds=*/10);
  CHECK(rate.window() == absl::Seconds(10));
  CHECK(rate.InWindow() == 0);

  rate.Add(20);
  clock.Advance(absl::Seconds(3));
  rate.Add(10);
  CHECK(rate.InWindow() == 30);

  clock.Advance(absl::Seconds(8));  // the first 20 are 11 s old now
  CHECK(rate.InWindow() == 10);
  clock.Advance(absl::Seconds(9));
  CHECK(rate.InWindow() == 0);

  // The bucket of the first 20 serves this second now, from zero.
  rate.Add(5);
  CHECK(rate.InWindow() == 5);
}

TEST_CASE("RecentRate ignores counts from the future after the clock steps back",
          "[edgehub][rate]") {
  FakeClock clock;
  RecentRate rate(&clock, 10);
  rate.Add(40);
  clock.SetTime(clock.Now() - absl::Seconds(30));
  CHECK(rate.InWindow() == 0);
  rate.Add(10);
  CHECK(rate.InWindow() == 10);
}

}  // namespace
}  // namespace nereid::gm
