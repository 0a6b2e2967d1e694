#pragma once

// Events counted over the last `window` (in whole-second buckets), on the injected Clock: how
// fast the hub has been finishing reports lately, for the retry estimate of a RETRY "Busy".
// A window, not a lifetime average, so it follows the API limiter and the API server as they
// change; measured over the part of the window since the first event in it, so a burst that
// began two seconds ago is not diluted over ten. Not thread-safe: the hub calls it under its
// mutex.

#include <cstdint>
#include <vector>

#include "absl/time/time.h"
#include "common/time/clock.h"

namespace nereid::gm {

class RecentRate {
 public:
  explicit RecentRate(Clock* clock, int window_seconds = 10);

  struct Recent {
    uint64_t events = 0;  // in the window (this second and the window - 1 before it)
    // From the start of the oldest second with events in the window to the end of this one;
    // zero when there were none.
    absl::Duration span;
  };

  void Add(uint64_t events);
  Recent Get() const;

 private:
  // The bucket of second `second`, cleared if it last held an older second.
  uint64_t& BucketFor(int64_t second);
  int64_t NowSecond() const;

  Clock* clock_;
  std::vector<uint64_t> counts_;
  std::vector<int64_t> seconds_;  // which second each bucket counts
};

}  // namespace nereid::gm
