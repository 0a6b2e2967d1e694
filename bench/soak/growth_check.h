#pragma once

// The soak's verdict on one sampled series (RSS, fds, threads, file size, queue depth): does its
// growth level off?
//
// The samples are split by time into three equal windows: first, middle, last. In the first and
// last window the slope is the Theil–Sen estimate (the median of the slopes between every pair of
// samples), and the growth over the last window is that slope times the window's length. A series
// FAILS when both hold:
//   1. growth over the last third > `floor` (an absolute tolerance per resource: what allocator
//      arenas, gRPC's thread pool or SQLite's WAL high-water mark move by design), and
//   2. slope(last third) > 0.5 * max(slope(first third), 0) — it has not slowed to half its
//      warm-up rate (a series that was flat or falling at first and grows at the end fails on 1
//      alone).
// Why this is robust to noise on a shared 2-core machine: the Theil–Sen slope ignores up to ~29%
// of outlying samples (a GC-like spike, a queue that backs up while another build steals the
// CPU), unlike a least-squares fit or a first-vs-last difference; the floor keeps a flat series'
// random tilt from failing; and a warm-up (caches, pools, WAL filling) has a steep first third and
// a flat last one, so it passes on 2. A leak's slope is about the same in both thirds and fails.
// It cannot see a leak smaller than `floor` per third of the run: longer runs see smaller ones.

#include <string>
#include <vector>

namespace nereid::bench {

struct SeriesPoint {
  double t = 0;  // seconds since the start
  double value = 0;
};

// Median of the pairwise slopes (value per second); 0 for fewer than two points or equal times.
double TheilSenSlope(const std::vector<SeriesPoint>& points);

struct GrowthVerdict {
  std::string name;
  bool enough_samples = false;  // at least 3 samples in each third
  double first_slope = 0;       // per second
  double last_slope = 0;        // per second
  double last_growth = 0;       // last_slope * length of the last third
  double floor = 0;
  bool grows = false;           // fails the soak
};

GrowthVerdict CheckGrowth(const std::string& name, const std::vector<SeriesPoint>& points,
                          double floor);

}  // namespace nereid::bench
