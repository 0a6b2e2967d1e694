#include "bench/soak/growth_check.h"

#include <algorithm>

namespace nereid::bench {

double TheilSenSlope(const std::vector<SeriesPoint>& points) {
  std::vector<double> slopes;
  for (std::size_t i = 0; i < points.size(); ++i) {
    for (std::size_t j = i + 1; j < points.size(); ++j) {
      const double dt = points[j].t - points[i].t;
      if (dt != 0) slopes.push_back((points[j].value - points[i].value) / dt);
    }
  }
  if (slopes.empty()) return 0;
  const std::size_t mid = slopes.size() / 2;
  std::nth_element(slopes.begin(), slopes.begin() + mid, slopes.end());
  if (slopes.size() % 2 == 1) return slopes[mid];
  const double upper = slopes[mid];
  const double lower = *std::max_element(slopes.begin(), slopes.begin() + mid);
  return (lower + upper) / 2;
}

GrowthVerdict CheckGrowth(const std::string& name, const std::vector<SeriesPoint>& points,
                          double floor) {
  GrowthVerdict verdict;
  verdict.name = name;
  verdict.floor = floor;
  if (points.size() < 2) return verdict;
  const double start = points.front().t;
  const double third = (points.back().t - start) / 3;
  std::vector<SeriesPoint> first, last;
  for (const SeriesPoint& point : points) {
    if (point.t <= start + third) first.push_back(point);
    if (point.t >= start + 2 * third) last.push_back(point);
  }
  verdict.enough_samples = first.size() >= 3 && last.size() >= 3;
  if (!verdict.enough_samples) return verdict;
  verdict.first_slope = TheilSenSlope(first);
  verdict.last_slope = TheilSenSlope(last);
  verdict.last_growth = verdict.last_slope * (last.back().t - last.front().t);
  verdict.grows = verdict.last_growth > floor &&
                  verdict.last_slope > 0.5 * std::max(verdict.first_slope, 0.0);
  return verdict;
}

}  // namespace nereid::bench
