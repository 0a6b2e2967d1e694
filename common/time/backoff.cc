#include "common/time/backoff.h"

#include <algorithm>
#include <cmath>

#include "absl/random/random.h"

namespace nereid {

ExponentialBackoff::ExponentialBackoff(Options options, std::function<double()> uniform01)
    : options_(options), uniform01_(std::move(uniform01)) {
  if (!uniform01_) {
    uniform01_ = [gen = std::make_shared<absl::BitGen>()]() {
      return absl::Uniform<double>(*gen, 0.0, 1.0);
    };
  }
}

absl::Duration ExponentialBackoff::Next() {
  // Grow in floating point and cap before converting, so large attempt counts cannot overflow.
  const double max_seconds = absl::ToDoubleSeconds(options_.max);
  double seconds = absl::ToDoubleSeconds(options_.initial) *
                   std::pow(options_.multiplier, static_cast<double>(attempts_));
  seconds = std::min(seconds, max_seconds);
  if (options_.jitter > 0) {
    seconds *= 1.0 - options_.jitter + 2.0 * options_.jitter * uniform01_();
    seconds = std::min(seconds, max_seconds);
  }
  if (attempts_ < 1000) ++attempts_;
  return absl::Seconds(seconds);
}

absl::Duration ExponentialBackoff::UniformIn(absl::Duration low, absl::Duration high) {
  return low + (high - low) * uniform01_();
}

}  // namespace nereid
