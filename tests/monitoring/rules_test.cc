// The alerts of deploy/optional/monitoring/prometheusrule.yaml with Debian's real promtool:
// `promtool check rules` on the PrometheusRule's spec, `promtool test rules` with
// tests/monitoring/rules_test.yaml (a case where each alert fires and one where it stays quiet,
// which this test also checks is there), and the conventions every alert keeps: a `for:`, a
// severity, a summary and a runbook section in docs/operations.md.

#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "absl/strings/ascii.h"
#include "tests/monitoring/monitoring_files.h"
#include "tests/support/subprocess.h"

namespace nereid::testing {
namespace {

using kube::Json;

const std::string kPromtool = NEREID_PROMTOOL;
const std::string kTests = std::string(NEREID_SOURCE_DIR) + "/tests/monitoring/rules_test.yaml";

// The rule file and the unit tests side by side in a temp dir (rule_files is relative to the
// test file).
struct RuleDir {
  RuleDir() : dir(*TempDir::Create("rules-test-")) {
    REQUIRE(dir.Write("nereid.rules.yaml", RuleFileSpec().dump(2)).ok());
    std::filesystem::copy_file(kTests, dir.File("rules_test.yaml"));
  }
  TempDir dir;
};

CommandResult Promtool(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {kPromtool};
  argv.insert(argv.end(), args.begin(), args.end());
  auto result = RunCommand(argv, absl::Seconds(60));
  REQUIRE(result.ok());
  REQUIRE_FALSE(result->timed_out);
  return *result;
}

TEST_CASE("promtool check rules accepts the PrometheusRule's rules") {
  RuleDir rules;
  CommandResult r = Promtool({"check", "rules", rules.dir.File("nereid.rules.yaml")});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("SUCCESS") != std::string::npos);
}

TEST_CASE("promtool test rules: every alert fires where it should and only there") {
  RuleDir rules;
  CommandResult r = Promtool({"test", "rules", rules.dir.File("rules_test.yaml")});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);

  // A wrong expectation fails (the test above could not pass vacuously).
  std::string broken = ReadText(kTests);
  const std::string summary = "summary: No Nereid GlobalManager replica leads";
  REQUIRE(broken.find(summary) != std::string::npos);
  broken.replace(broken.find(summary), summary.size(), "summary: something else");
  REQUIRE(rules.dir.Write("broken_test.yaml", broken).ok());
  CHECK(Promtool({"test", "rules", rules.dir.File("broken_test.yaml")}).exit_code != 0);
}

TEST_CASE("each alert has a firing and a quiet unit test") {
  auto docs = api::YamlToJson(ReadText(kTests));
  REQUIRE(docs.ok());
  std::map<std::string, std::pair<int, int>> cases;  // alert -> (firing, quiet)
  for (const Json& test : (*docs)[0].at("tests")) {
    for (const Json& check : test.value("alert_rule_test", Json::array())) {
      auto& [firing, quiet] = cases[check.at("alertname").get<std::string>()];
      (check.value("exp_alerts", Json::array()).empty() ? quiet : firing)++;
    }
  }
  std::set<std::string> alerts;
  for (const Json& rule : Rules(RuleFileSpec())) {
    if (!rule.contains("alert")) continue;
    const std::string alert = rule["alert"];
    alerts.insert(alert);
    INFO(alert);
    CHECK(cases[alert].first > 0);
    CHECK(cases[alert].second > 0);
  }
  // No test names an alert that does not exist.
  for (const auto& [alert, counts] : cases) CHECK(alerts.count(alert) == 1);
  CHECK(alerts.size() >= 14);
}

TEST_CASE("every alert has a for, a severity, a summary and a runbook section") {
  const std::string runbooks = ReadText(std::string(NEREID_SOURCE_DIR) + "/docs/operations.md");
  for (const Json& rule : Rules(RuleFileSpec())) {
    if (!rule.contains("alert")) continue;
    const std::string alert = rule["alert"];
    INFO(alert);
    CHECK_FALSE(rule.value("for", "").empty());
    const std::string severity = rule["labels"].value("severity", "");
    CHECK((severity == "critical" || severity == "warning"));
    CHECK_FALSE(rule["annotations"].value("summary", "").empty());
    // runbook_url: docs/operations.md#<anchor>, and that anchor is a "### Heading" there.
    const std::string url = rule["annotations"].value("runbook_url", "");
    const std::string prefix = "docs/operations.md#";
    REQUIRE(url.rfind(prefix, 0) == 0);
    const std::string anchor = url.substr(prefix.size());
    bool found = false;
    for (size_t at = runbooks.find("\n### "); at != std::string::npos;
         at = runbooks.find("\n### ", at + 1)) {
      const std::string heading = runbooks.substr(at + 5, runbooks.find('\n', at + 5) - at - 5);
      found = found || absl::AsciiStrToLower(heading) == anchor;
    }
    CHECK(found);
  }
}

}  // namespace
}  // namespace nereid::testing
