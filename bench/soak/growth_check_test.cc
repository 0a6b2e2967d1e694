// The soak's growth verdict on made-up series: a steady leak fails, a warm-up that levels off
// passes, noise and spikes around a flat line pass, late growth fails, a growth under the floor
// passes.

#include "bench/soak/growth_check.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <vector>

namespace nereid::bench {
namespace {

// 60 samples 10 s apart (a 10-minute run).
std::vector<SeriesPoint> Series(const std::function<double(int)>& value) {
  std::vector<SeriesPoint> points;
  for (int i = 0; i < 60; ++i) points.push_back({10.0 * i, value(i)});
  return points;
}

// Deterministic noise in [-amplitude, amplitude].
double Noise(int i, double amplitude) { return amplitude * std::sin(i * 12.9898) ; }

TEST_CASE("Theil-Sen ignores a few spikes that would tilt a least-squares line") {
  std::vector<SeriesPoint> points = Series([](int i) { return 100.0 + 2.0 * i; });
  points[55].value += 10000;
  points[57].value += 10000;
  CHECK(TheilSenSlope(points) == Approx(0.2));  // 2 per sample = 0.2 per second
  CHECK(TheilSenSlope({}) == 0);
  CHECK(TheilSenSlope({{1, 5}}) == 0);
}

TEST_CASE("a steady leak fails") {
  const GrowthVerdict verdict =
      CheckGrowth("rss", Series([](int i) { return 50000.0 + 100.0 * i + Noise(i, 300); }), 1024);
  CHECK(verdict.enough_samples);
  CHECK(verdict.last_slope == Approx(10).epsilon(0.2));
  CHECK(verdict.grows);
}

TEST_CASE("a warm-up that levels off passes") {
  const GrowthVerdict verdict = CheckGrowth(
      "rss", Series([](int i) { return 50000.0 + 20000.0 * (1 - std::exp(-i / 5.0)); }), 1024);
  CHECK(verdict.first_slope > 10 * verdict.last_slope);
  CHECK_FALSE(verdict.grows);
}

TEST_CASE("noise and spikes around a flat line pass") {
  std::vector<SeriesPoint> points = Series([](int i) { return 30.0 + Noise(i, 3); });
  points[50].value = 400;  // a queue that backed up once while the machine was busy
  points[51].value = 200;
  points[58].value = 300;
  CHECK_FALSE(CheckGrowth("queue", points, 10).grows);
}

TEST_CASE("growth that starts late fails; growth under the floor passes") {
  auto late = [](int i) { return i < 30 ? 100.0 : 100.0 + 5.0 * (i - 30); };
  CHECK(CheckGrowth("fds", Series(late), 4).grows);
  CHECK_FALSE(CheckGrowth("fds", Series([](int i) { return 100.0 + 0.01 * i; }), 4).grows);
}

TEST_CASE("too few samples give no verdict") {
  const GrowthVerdict verdict = CheckGrowth("rss", {{0, 1}, {10, 2}, {20, 3}, {30, 4}}, 0);
  CHECK_FALSE(verdict.enough_samples);
  CHECK_FALSE(verdict.grows);
}

}  // namespace
}  // namespace nereid::bench
