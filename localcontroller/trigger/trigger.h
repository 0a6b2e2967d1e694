#pragma once

// Trigger evaluation for incremental/lifelong learning jobs (trainSpec.trigger,
// deploySpec.trigger): a trigger fires when the current time of day is inside its timer window (if
// it has one) AND its condition `metric operator threshold` holds. Semantics are Sedna's
// (pkg/localcontroller/trigger/trigger.go), with its gaps closed:
//
//   operators   > gt, >= ge, = == eq, != ne, < lt, <= le. Equality has a 1e-6 tolerance: `>` and
//               `<` are false and `>=`, `<=`, `==` true when |value - threshold| < 1e-6.
//               An unknown operator is a parse error (Sedna silently never fires).
//   metric      "name" or "name[i]" (integer i >= 0, spaces around the name allowed). A metric is
//               a list of numbers (a scalar is a list of one). "name[i]" compares element i;
//               "name" alone compares every element and holds only when all do (Sedna compares
//               an unindexed list as 0). A missing metric, an index out of range or an empty list
//               does not fire, with a reason that says so.
//   timer       {start, end} as "HH:MM" (00:00-23:59) or "24:00" (end of day), node-local time,
//               both ends inclusive to the minute; start > end wraps midnight (23:00-01:00 holds
//               at 23:30 and 00:30); start == end is that one minute.
//   period      checkPeriodSeconds (default 60, values <= 0 mean the default): how often the
//               caller evaluates. Sedna parses and ignores it (fixed 10 s loop); the LC's job
//               manager honours it (see job_manager.h).
//
// Pure functions of their inputs (the time and zone are parameters), so tests need no clock.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "nereid/edge/v1/resources.pb.h"

namespace nereid::lc::trigger {

inline constexpr double kEqualityTolerance = 1e-6;
inline constexpr int64_t kDefaultCheckPeriodSeconds = 60;

enum class Operator { kGt, kGe, kEq, kNe, kLt, kLe };

// Parses Sedna's spellings; nullopt for anything else.
std::optional<Operator> ParseOperator(std::string_view op);
std::string_view OperatorSymbol(Operator op);  // ">", ">=", "==", "!=", "<", "<="
// Whether `value op threshold` holds, with the equality tolerance.
bool Compare(double value, Operator op, double threshold);

// "HH:MM" (00:00..23:59) or "24:00" → minutes since midnight (0..1440); nullopt otherwise.
std::optional<int> ParseTimeOfDay(std::string_view text);

// A metric reference: "precision_delta" or "precision_delta[1]".
struct MetricRef {
  std::string name;
  std::optional<size_t> index;
};
absl::StatusOr<MetricRef> ParseMetricRef(std::string_view metric);

// Metric values by name; a scalar is a one-element list.
using Metrics = std::map<std::string, std::vector<double>, std::less<>>;

struct Decision {
  bool fired = false;
  // Why, for logs and the TriggerEvent: "num_of_samples 6 > 5",
  // "outside the timer window 01:00-02:00 (now 03:15)", "metric precision_delta is not available".
  std::string reason;
};

class Trigger {
 public:
  // InvalidArgument naming the field for an unknown operator, a malformed metric or timer.
  static absl::StatusOr<Trigger> FromProto(const edge::v1::Trigger& proto);

  // Evaluates at `now` in `zone` (the node's local time zone in production).
  Decision Evaluate(const Metrics& metrics, absl::Time now, absl::TimeZone zone) const;
  // The timer part alone (true when there is no timer); `reason` set when outside.
  bool InWindow(absl::Time now, absl::TimeZone zone, std::string* reason = nullptr) const;

  absl::Duration check_period() const { return check_period_; }
  const MetricRef& metric() const { return metric_; }
  Operator op() const { return op_; }
  double threshold() const { return threshold_; }

 private:
  Trigger() = default;

  absl::Duration check_period_ = absl::Seconds(kDefaultCheckPeriodSeconds);
  std::optional<std::pair<int, int>> window_;  // [start, end] minutes
  std::string window_text_;                    // "01:00-02:00" for reasons
  MetricRef metric_;
  std::string metric_text_;
  Operator op_ = Operator::kGt;
  double threshold_ = 0;
};

}  // namespace nereid::lc::trigger
