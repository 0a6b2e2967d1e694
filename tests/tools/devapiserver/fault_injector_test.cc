#include "tools/devapiserver/fault_injector.h"

#include <catch2/catch.hpp>

#include "common/time/fake_clock.h"

namespace nereid::devapi {
namespace {

TEST_CASE("FaultInjector: a rule fails requests for a time window, then lets them through") {
  FakeClock clock;
  FaultInjector faults(&clock);
  CHECK_FALSE(faults.Intercept("any").has_value());  // nothing set: no faults
  auto rule = FaultInjector::RuleFromJson(
      {{"code", 429}, {"retryAfterSeconds", 1}, {"durationSeconds", 5}}, clock.Now());
  REQUIRE(rule.ok());
  faults.Set(*rule);
  auto fault = faults.Intercept("nereid-globalmanager");
  REQUIRE(fault.has_value());
  CHECK(fault->code == 429);
  CHECK(fault->retry_after_seconds == 1);
  clock.Advance(absl::Seconds(4));
  CHECK(faults.Intercept("kubectl").has_value());
  clock.Advance(absl::Seconds(1));
  CHECK_FALSE(faults.Intercept("kubectl").has_value());
  CHECK(faults.Snapshot()["injected"] == 2);
}

TEST_CASE("FaultInjector: a count and a user agent narrow the rule; Clear ends it") {
  FakeClock clock;
  FaultInjector faults(&clock);
  auto rule = FaultInjector::RuleFromJson({{"code", 500}, {"count", 2}, {"userAgent", "gm"}},
                                          clock.Now());
  REQUIRE(rule.ok());
  faults.Set(*rule);
  CHECK_FALSE(faults.Intercept("kubectl").has_value());
  CHECK(faults.Intercept("my-gm/1").has_value());
  CHECK(faults.Intercept("my-gm/1").has_value());
  CHECK_FALSE(faults.Intercept("my-gm/1").has_value());
  faults.Set(*FaultInjector::RuleFromJson({{"code", 503}}, clock.Now()));
  CHECK(faults.Intercept("kubectl")->code == 503);
  faults.Clear();
  CHECK_FALSE(faults.Intercept("kubectl").has_value());
  CHECK(faults.Snapshot()["active"] == false);
}

TEST_CASE("FaultInjector: a resource and a verb narrow the rule (403 on reading Secrets)") {
  FakeClock clock;
  FaultInjector faults(&clock);
  auto rule = FaultInjector::RuleFromJson(
      {{"code", 403}, {"resource", "secrets"}, {"verb", "get"}}, clock.Now());
  REQUIRE(rule.ok());
  faults.Set(*rule);
  CHECK_FALSE(faults.Intercept("gm", {"get", "pods", ""}).has_value());
  CHECK_FALSE(faults.Intercept("gm", {"list", "secrets", ""}).has_value());
  std::optional<InjectedFault> fault = faults.Intercept("gm", {"get", "secrets", ""});
  REQUIRE(fault.has_value());
  CHECK(fault->code == 403);
  CHECK(faults.Snapshot()["rule"]["resource"] == "secrets");
  CHECK_FALSE(FaultInjector::RuleFromJson({{"code", 403}, {"resource", 1}}, clock.Now()).ok());
}

TEST_CASE("FaultInjector: malformed rules are refused") {
  const absl::Time now = absl::Now();
  CHECK_FALSE(FaultInjector::RuleFromJson({{"count", 1}}, now).ok());  // no code
  CHECK_FALSE(FaultInjector::RuleFromJson({{"code", 200}}, now).ok());
  CHECK_FALSE(FaultInjector::RuleFromJson({{"code", 429}, {"count", -1}}, now).ok());
  CHECK_FALSE(FaultInjector::RuleFromJson({{"code", 429}, {"durationSeconds", "5"}}, now).ok());
  CHECK_FALSE(FaultInjector::RuleFromJson({{"code", 429}, {"userAgent", 1}}, now).ok());
  CHECK_FALSE(FaultInjector::RuleFromJson(kube::Json::array(), now).ok());
}

}  // namespace
}  // namespace nereid::devapi
