#include "common/config/values.h"

#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/strings/absl_compat.h"

namespace nereid::config {

absl::StatusOr<bool> ParseBool(std::string_view text) {
  const std::string lower = absl::AsciiStrToLower(ToAbsl(text));
  if (lower == "true" || lower == "1" || lower == "t" || lower == "yes") return true;
  if (lower == "false" || lower == "0" || lower == "f" || lower == "no") return false;
  return absl::InvalidArgumentError(
      absl::StrCat("\"", ToAbsl(text), "\" is not a boolean (true|false)"));
}

absl::StatusOr<int64_t> ParseInt(std::string_view text, int64_t min, int64_t max) {
  int64_t value = 0;
  if (!absl::SimpleAtoi(ToAbsl(text), &value)) {
    return absl::InvalidArgumentError(absl::StrCat("\"", ToAbsl(text), "\" is not an integer"));
  }
  if (value < min || value > max) {
    return absl::InvalidArgumentError(
        absl::StrCat(value, " is out of range [", min, ", ", max, "]"));
  }
  return value;
}

absl::StatusOr<ParsedDuration> ParseDuration(std::string_view text) {
  double seconds = 0;
  if (text != "0" && absl::SimpleAtod(ToAbsl(text), &seconds) && std::isfinite(seconds)) {
    return ParsedDuration{absl::Seconds(seconds), /*bare_seconds=*/true};
  }
  absl::Duration duration;
  if (!absl::ParseDuration(ToAbsl(text), &duration) || duration == absl::InfiniteDuration() ||
      duration == -absl::InfiniteDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "\"", ToAbsl(text), "\" is not a duration (a number with a unit: 30s, 5m, 1h, 250ms)"));
  }
  return ParsedDuration{duration, /*bare_seconds=*/false};
}

std::string DurationText(absl::Duration duration) {
  if (duration == absl::ZeroDuration()) return "0s";
  return absl::FormatDuration(duration);
}

}  // namespace nereid::config
