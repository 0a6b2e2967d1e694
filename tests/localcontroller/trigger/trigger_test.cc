#include "localcontroller/trigger/trigger.h"

#include <catch2/catch.hpp>

#include "absl/time/civil_time.h"

namespace nereid::lc::trigger {
namespace {

edge::v1::Trigger MakeTrigger(const std::string& op, double threshold, const std::string& metric) {
  edge::v1::Trigger t;
  t.mutable_condition()->set_operator_(op);
  t.mutable_condition()->set_threshold(threshold);
  t.mutable_condition()->set_metric(metric);
  return t;
}

absl::Time At(int hour, int minute) {
  return absl::FromCivil(absl::CivilMinute(2024, 5, 17, hour, minute), absl::UTCTimeZone());
}

Trigger Parse(const edge::v1::Trigger& proto) {
  absl::StatusOr<Trigger> t = Trigger::FromProto(proto);
  REQUIRE(t.ok());
  return *t;
}

bool Fires(const std::string& op, double threshold, double value) {
  Trigger t = Parse(MakeTrigger(op, threshold, "num_of_samples"));
  return t.Evaluate({{"num_of_samples", {value}}}, At(12, 0), absl::UTCTimeZone()).fired;
}

TEST_CASE("every operator spelling compares as Sedna's with a 1e-6 equality tolerance") {
  struct Row {
    std::vector<std::string> spellings;
    bool below, equal, nearly_equal, above;
  };
  // value 4 (below 5), 5 (equal), 5 + 5e-7 (equal within tolerance), 6 (above).
  const std::vector<Row> rows = {
      {{">", "gt"}, false, false, false, true},  {{">=", "ge"}, false, true, true, true},
      {{"=", "==", "eq"}, false, true, true, false}, {{"!=", "ne"}, true, false, false, true},
      {{"<", "lt"}, true, false, false, false},  {{"<=", "le"}, true, true, true, false},
  };
  for (const Row& row : rows) {
    for (const std::string& op : row.spellings) {
      INFO("operator " << op);
      CHECK(Fires(op, 5, 4) == row.below);
      CHECK(Fires(op, 5, 5) == row.equal);
      CHECK(Fires(op, 5, 5 + 5e-7) == row.nearly_equal);
      CHECK(Fires(op, 5, 5 - 5e-7) == row.nearly_equal);
      CHECK(Fires(op, 5, 6) == row.above);
    }
  }
  // Just outside the tolerance is a real difference.
  CHECK(Fires(">", 5, 5 + 2e-6));
  CHECK_FALSE(Fires("==", 5, 5 + 2e-6));
  CHECK(Fires("<", 0.01, 0.01 - 2e-6));
}

TEST_CASE("an unknown operator, a malformed metric or timer is a parse error") {
  CHECK_FALSE(Trigger::FromProto(MakeTrigger("=>", 1, "m")).ok());
  CHECK_FALSE(Trigger::FromProto(MakeTrigger("", 1, "m")).ok());
  CHECK_FALSE(Trigger::FromProto(MakeTrigger("GT", 1, "m")).ok());  // Sedna is case-sensitive.
  CHECK_FALSE(Trigger::FromProto(MakeTrigger(">", 1, "")).ok());
  CHECK_FALSE(Trigger::FromProto(MakeTrigger(">", 1, "m[")).ok());
  CHECK_FALSE(Trigger::FromProto(MakeTrigger(">", 1, "m[x]")).ok());
  CHECK_FALSE(Trigger::FromProto(MakeTrigger(">", 1, "m[-1]")).ok());
  CHECK_FALSE(Trigger::FromProto(MakeTrigger(">", 1, "[0]")).ok());
  for (const auto& [start, end] : std::vector<std::pair<std::string, std::string>>{
           {"25:00", "01:00"}, {"1:00", "02:00"}, {"01:60", "02:00"}, {"24:01", "02:00"},
           {"", "02:00"}, {"01:00", "2400"}}) {
    edge::v1::Trigger t = MakeTrigger(">", 1, "m");
    t.mutable_timer()->set_start(start);
    t.mutable_timer()->set_end(end);
    INFO(start << "-" << end);
    CHECK_FALSE(Trigger::FromProto(t).ok());
  }
}

TEST_CASE("time of day parsing accepts 00:00-23:59 and 24:00") {
  CHECK(ParseTimeOfDay("00:00") == 0);
  CHECK(ParseTimeOfDay("23:59") == 23 * 60 + 59);
  CHECK(ParseTimeOfDay("24:00") == 24 * 60);
  CHECK_FALSE(ParseTimeOfDay("24:30").has_value());
  CHECK_FALSE(ParseTimeOfDay("7:30").has_value());
  CHECK_FALSE(ParseTimeOfDay("07-30").has_value());
}

TEST_CASE("timer windows: plain, wrapping midnight, 24:00, single minute, inclusive ends") {
  auto in_window = [](const std::string& start, const std::string& end, int h, int m) {
    edge::v1::Trigger proto = MakeTrigger(">", 0, "num_of_samples");
    proto.mutable_timer()->set_start(start);
    proto.mutable_timer()->set_end(end);
    Trigger t = Parse(proto);
    const Decision d = t.Evaluate({{"num_of_samples", {1}}}, At(h, m), absl::UTCTimeZone());
    CHECK(t.InWindow(At(h, m), absl::UTCTimeZone()) == d.fired);
    return d.fired;
  };
  // Plain window, both ends inclusive.
  CHECK_FALSE(in_window("01:00", "02:00", 0, 59));
  CHECK(in_window("01:00", "02:00", 1, 0));
  CHECK(in_window("01:00", "02:00", 2, 0));
  CHECK_FALSE(in_window("01:00", "02:00", 2, 1));
  // Wrapping midnight.
  CHECK(in_window("23:00", "01:00", 23, 30));
  CHECK(in_window("23:00", "01:00", 0, 0));
  CHECK(in_window("23:00", "01:00", 0, 30));
  CHECK(in_window("23:00", "01:00", 1, 0));
  CHECK_FALSE(in_window("23:00", "01:00", 1, 1));
  CHECK_FALSE(in_window("23:00", "01:00", 12, 0));
  CHECK_FALSE(in_window("23:00", "01:00", 22, 59));
  // 24:00 as the end: the whole rest of the day; 00:00-24:00 is always.
  CHECK(in_window("00:00", "24:00", 0, 0));
  CHECK(in_window("00:00", "24:00", 23, 59));
  CHECK(in_window("22:00", "24:00", 23, 59));
  CHECK_FALSE(in_window("22:00", "24:00", 21, 59));
  // 24:00 as the start wraps: only up to the end.
  CHECK(in_window("24:00", "06:00", 5, 0));
  CHECK_FALSE(in_window("24:00", "06:00", 23, 0));
  // start == end: that one minute.
  CHECK(in_window("12:00", "12:00", 12, 0));
  CHECK_FALSE(in_window("12:00", "12:00", 12, 1));
}

TEST_CASE("the timer uses the given zone (node-local time)") {
  edge::v1::Trigger proto = MakeTrigger(">", 0, "num_of_samples");
  proto.mutable_timer()->set_start("09:00");
  proto.mutable_timer()->set_end("10:00");
  Trigger t = Parse(proto);
  const absl::TimeZone plus2 = absl::FixedTimeZone(2 * 3600);
  // 07:30 UTC is 09:30 at UTC+2.
  CHECK(t.InWindow(At(7, 30), plus2));
  CHECK_FALSE(t.InWindow(At(7, 30), absl::UTCTimeZone()));
  std::string why;
  CHECK_FALSE(t.InWindow(At(11, 5), plus2, &why));
  CHECK(why == "outside the timer window 09:00-10:00 (now 13:05)");
}

TEST_CASE("indexed metrics, lists, missing metrics and their reasons") {
  const Metrics metrics = {
      {"precision", {0.9, 0.8}},
      {"precision_delta", {0.02, -0.01}},
      {"recall_delta", {0.05}},
      {"empty", {}},
  };
  auto eval = [&](const std::string& op, double threshold, const std::string& metric) {
    return Parse(MakeTrigger(op, threshold, metric))
        .Evaluate(metrics, At(12, 0), absl::UTCTimeZone());
  };
  CHECK(eval(">", 0.01, "precision_delta[0]").fired);
  CHECK_FALSE(eval(">", 0.01, "precision_delta[1]").fired);
  CHECK(eval(">", 0.01, " precision_delta [ 0 ] ").fired);
  // Unindexed list: every element must hold.
  CHECK_FALSE(eval(">", 0.01, "precision_delta").fired);
  CHECK(eval(">", 0.5, "precision").fired);
  CHECK(eval(">", 0.01, "recall_delta").fired);
  CHECK(eval(">", 0.01, "recall_delta[0]").fired);

  Decision d = eval(">", 0.01, "precision_delta[2]");
  CHECK_FALSE(d.fired);
  CHECK(d.reason == "metric precision_delta[2]: index 2 is out of range (2 values)");
  d = eval(">", 0.01, "f1_delta");
  CHECK_FALSE(d.fired);
  CHECK(d.reason == "metric f1_delta is not available");
  d = eval(">", 0.01, "empty");
  CHECK_FALSE(d.fired);
  CHECK(d.reason == "metric empty has no values");
  d = eval(">", 0.01, "precision_delta[0]");
  CHECK(d.reason == "precision_delta[0] 0.02 > 0.01");
  d = eval(">", 0.01, "precision_delta");
  CHECK(d.reason == "precision_delta [0.02,-0.01] not > 0.01");
}

TEST_CASE("the timer and the condition must both hold") {
  edge::v1::Trigger proto = MakeTrigger(">", 5, "num_of_samples");
  proto.mutable_timer()->set_start("01:00");
  proto.mutable_timer()->set_end("02:00");
  Trigger t = Parse(proto);
  CHECK(t.Evaluate({{"num_of_samples", {6}}}, At(1, 30), absl::UTCTimeZone()).fired);
  CHECK_FALSE(t.Evaluate({{"num_of_samples", {6}}}, At(3, 0), absl::UTCTimeZone()).fired);
  CHECK_FALSE(t.Evaluate({{"num_of_samples", {5}}}, At(1, 30), absl::UTCTimeZone()).fired);
}

TEST_CASE("checkPeriodSeconds: default 60, honoured when positive") {
  edge::v1::Trigger proto = MakeTrigger(">", 5, "num_of_samples");
  CHECK(Parse(proto).check_period() == absl::Seconds(60));
  proto.set_check_period_seconds(5);
  CHECK(Parse(proto).check_period() == absl::Seconds(5));
  proto.set_check_period_seconds(-3);
  CHECK(Parse(proto).check_period() == absl::Seconds(60));
}

TEST_CASE("NaN never satisfies a comparison") {
  const double nan = std::nan("");
  for (const char* op : {">", ">=", "==", "!=", "<", "<="}) {
    INFO(op);
    CHECK_FALSE(Compare(nan, *ParseOperator(op), 1));
  }
}

}  // namespace
}  // namespace nereid::lc::trigger
