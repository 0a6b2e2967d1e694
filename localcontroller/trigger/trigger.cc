#include "localcontroller/trigger/trigger.h"

#include <cmath>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/strings/absl_compat.h"

namespace nereid::lc::trigger {
namespace {

std::string FormatMinutes(int minutes) {
  return absl::StrFormat("%02d:%02d", minutes / 60, minutes % 60);
}

// Shortest text that reads back as `value` for the usual metric magnitudes.
std::string FormatNumber(double value) { return absl::StrFormat("%.6g", value); }

}  // namespace

std::optional<Operator> ParseOperator(std::string_view op) {
  if (op == ">" || op == "gt") return Operator::kGt;
  if (op == ">=" || op == "ge") return Operator::kGe;
  if (op == "=" || op == "==" || op == "eq") return Operator::kEq;
  if (op == "!=" || op == "ne") return Operator::kNe;
  if (op == "<" || op == "lt") return Operator::kLt;
  if (op == "<=" || op == "le") return Operator::kLe;
  return std::nullopt;
}

std::string_view OperatorSymbol(Operator op) {
  switch (op) {
    case Operator::kGt:
      return ">";
    case Operator::kGe:
      return ">=";
    case Operator::kEq:
      return "==";
    case Operator::kNe:
      return "!=";
    case Operator::kLt:
      return "<";
    case Operator::kLe:
      return "<=";
  }
  return "?";
}

bool Compare(double value, Operator op, double threshold) {
  if (std::isnan(value) || std::isnan(threshold)) return false;
  const bool equal = std::fabs(value - threshold) < kEqualityTolerance;
  switch (op) {
    case Operator::kGt:
      return !equal && value > threshold;
    case Operator::kGe:
      return equal || value >= threshold;
    case Operator::kEq:
      return equal;
    case Operator::kNe:
      return !equal;
    case Operator::kLt:
      return !equal && value < threshold;
    case Operator::kLe:
      return equal || value <= threshold;
  }
  return false;
}

std::optional<int> ParseTimeOfDay(std::string_view text) {
  if (text.size() != 5 || text[2] != ':') return std::nullopt;
  for (size_t i : {0, 1, 3, 4}) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(text[i]))) return std::nullopt;
  }
  const int hours = (text[0] - '0') * 10 + (text[1] - '0');
  const int minutes = (text[3] - '0') * 10 + (text[4] - '0');
  if (hours == 24 && minutes == 0) return 24 * 60;
  if (hours > 23 || minutes > 59) return std::nullopt;
  return hours * 60 + minutes;
}

absl::StatusOr<MetricRef> ParseMetricRef(std::string_view metric_text) {
  const std::string_view metric = ToStd(absl::StripAsciiWhitespace(ToAbsl(metric_text)));
  MetricRef ref;
  const size_t open = metric.find('[');
  if (open == std::string_view::npos) {
    ref.name = std::string(absl::StripAsciiWhitespace(ToAbsl(metric)));
  } else {
    const size_t close = metric.rfind(']');
    if (close == std::string_view::npos || close < open || close != metric.size() - 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("metric \"", ToAbsl(metric), "\": expected name or name[index]"));
    }
    ref.name = std::string(absl::StripAsciiWhitespace(ToAbsl(metric.substr(0, open))));
    std::string_view index_text = metric.substr(open + 1, close - open - 1);
    uint64_t index = 0;
    if (index_text.empty() ||
        !absl::SimpleAtoi(absl::StripAsciiWhitespace(ToAbsl(index_text)), &index)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "metric \"", ToAbsl(metric), "\": the index must be a non-negative integer"));
    }
    ref.index = static_cast<size_t>(index);
  }
  if (ref.name.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("metric \"", ToAbsl(metric), "\" has no name"));
  }
  return ref;
}

absl::StatusOr<Trigger> Trigger::FromProto(const edge::v1::Trigger& proto) {
  Trigger t;
  if (proto.check_period_seconds() > 0) t.check_period_ = absl::Seconds(proto.check_period_seconds());
  if (proto.has_timer()) {
    std::optional<int> start = ParseTimeOfDay(proto.timer().start());
    std::optional<int> end = ParseTimeOfDay(proto.timer().end());
    if (!start.has_value() || !end.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "trigger.timer: start \"", proto.timer().start(), "\" and end \"", proto.timer().end(),
          "\" must be HH:MM (00:00-23:59) or 24:00"));
    }
    t.window_ = {*start, *end};
    t.window_text_ = absl::StrCat(proto.timer().start(), "-", proto.timer().end());
  }
  std::optional<Operator> op = ParseOperator(proto.condition().operator_());
  if (!op.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("trigger.condition.operator \"", proto.condition().operator_(),
                     "\" is not one of > >= = == != < <= gt ge eq ne lt le"));
  }
  t.op_ = *op;
  absl::StatusOr<MetricRef> metric = ParseMetricRef(proto.condition().metric());
  if (!metric.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("trigger.condition.metric: ", metric.status().message()));
  }
  t.metric_ = *std::move(metric);
  t.metric_text_ = proto.condition().metric();
  t.threshold_ = proto.condition().threshold();
  return t;
}

bool Trigger::InWindow(absl::Time now, absl::TimeZone zone, std::string* reason) const {
  if (!window_.has_value()) return true;
  const absl::TimeZone::CivilInfo civil = zone.At(now);
  const int minute = civil.cs.hour() * 60 + civil.cs.minute();
  const auto [start, end] = *window_;
  // start > end: the window wraps midnight.
  const bool inside =
      start <= end ? (start <= minute && minute <= end) : (minute >= start || minute <= end);
  if (!inside && reason != nullptr) {
    *reason = absl::StrCat("outside the timer window ", window_text_, " (now ",
                           FormatMinutes(minute), ")");
  }
  return inside;
}

Decision Trigger::Evaluate(const Metrics& metrics, absl::Time now, absl::TimeZone zone) const {
  Decision d;
  if (!InWindow(now, zone, &d.reason)) return d;
  auto it = metrics.find(metric_.name);
  if (it == metrics.end()) {
    d.reason = absl::StrCat("metric ", metric_.name, " is not available");
    return d;
  }
  const std::vector<double>& values = it->second;
  const std::string cmp = absl::StrCat(" ", ToAbsl(OperatorSymbol(op_)), " ", FormatNumber(threshold_));
  if (metric_.index.has_value()) {
    if (*metric_.index >= values.size()) {
      d.reason = absl::StrCat("metric ", metric_text_, ": index ", *metric_.index,
                              " is out of range (", values.size(), " values)");
      return d;
    }
    const double value = values[*metric_.index];
    d.fired = Compare(value, op_, threshold_);
    d.reason = absl::StrCat(metric_text_, " ", FormatNumber(value), d.fired ? "" : " not", cmp);
    return d;
  }
  if (values.empty()) {
    d.reason = absl::StrCat("metric ", metric_.name, " has no values");
    return d;
  }
  std::string shown;
  d.fired = true;
  for (size_t i = 0; i < values.size(); ++i) {
    absl::StrAppend(&shown, i == 0 ? "" : ",", FormatNumber(values[i]));
    if (!Compare(values[i], op_, threshold_)) d.fired = false;
  }
  if (values.size() > 1) shown = absl::StrCat("[", shown, "]");
  d.reason = absl::StrCat(metric_.name, " ", shown, d.fired ? "" : " not", cmp);
  return d;
}

}  // namespace nereid::lc::trigger
