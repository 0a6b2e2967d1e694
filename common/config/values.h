#ifndef NEREID_COMMON_CONFIG_VALUES_H_
#define NEREID_COMMON_CONFIG_VALUES_H_

// The value syntaxes every Nereid binary accepts, on its command line, in its YAML file and in its
// environment alike. Errors are InvalidArgument with a message that does not name the setting (the
// caller knows where the value came from).

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace nereid::config {

// true|false, also 1|0, t|f, yes|no (any case).
absl::StatusOr<bool> ParseBool(std::string_view text);

// A decimal integer in [min, max].
absl::StatusOr<int64_t> ParseInt(std::string_view text, int64_t min, int64_t max);

// A duration: a sequence of decimal numbers with units, as absl::ParseDuration and Go's
// time.ParseDuration read them ("30s", "5m", "1h", "1m30s", "250ms"); "0" alone is zero.
// `bare_seconds` is set when the text was a number without a unit (the older "seconds" form, still
// read as seconds so existing files and manifests keep working; the caller warns).
struct ParsedDuration {
  absl::Duration value;
  bool bare_seconds = false;
};
absl::StatusOr<ParsedDuration> ParseDuration(std::string_view text);

// The canonical text of a duration: "30s", "1m30s", "1h", "250ms", "0s".
std::string DurationText(absl::Duration duration);

}  // namespace nereid::config

#endif  // NEREID_COMMON_CONFIG_VALUES_H_
