#include "globalmanager/edgehub/recent_rate.h"

#include <algorithm>
#include <limits>

namespace nereid::gm {

RecentRate::RecentRate(Clock* clock, int window_seconds)
    : clock_(clock),
      counts_(static_cast<std::size_t>(std::max(window_seconds, 1)), 0),
      seconds_(counts_.size(), std::numeric_limits<int64_t>::min()) {}

int64_t RecentRate::NowSecond() const { return absl::ToUnixSeconds(clock_->Now()); }

uint64_t& RecentRate::BucketFor(int64_t second) {
  const int64_t n = static_cast<int64_t>(counts_.size());
  const auto slot = static_cast<std::size_t>(((second % n) + n) % n);
  if (seconds_[slot] != second) {
    seconds_[slot] = second;
    counts_[slot] = 0;
  }
  return counts_[slot];
}

void RecentRate::Add(uint64_t events) { BucketFor(NowSecond()) += events; }

RecentRate::Recent RecentRate::Get() const {
  const int64_t now = NowSecond();
  const auto window = static_cast<int64_t>(counts_.size());
  Recent recent;
  int64_t oldest = now + 1;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    // Only the seconds of the window; a clock stepped back leaves buckets "from the future",
    // which do not count either.
    if (counts_[i] == 0 || seconds_[i] <= now - window || seconds_[i] > now) continue;
    recent.events += counts_[i];
    oldest = std::min(oldest, seconds_[i]);
  }
  if (recent.events > 0) recent.span = absl::Seconds(now - oldest + 1);
  return recent;
}

}  // namespace nereid::gm
