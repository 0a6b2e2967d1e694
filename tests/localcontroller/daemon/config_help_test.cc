// The LC's --help lists every setting with its default; --version stops loading.

#include <catch2/catch.hpp>

#include <sstream>

#include "localcontroller/config.h"
#include "tests/common/config/help_check.h"

namespace nereid::lc {
namespace {

TEST_CASE("--help lists every LC option with its default", "[lc][config]") {
  LcConfig defaults;
  config::OptionSet options = RegisterOptions(defaults);
  config::testing::CheckHelpListsEveryOption(options);
  std::ostringstream usage;
  PrintDaemonUsage(usage);
  CHECK(usage.str() == options.Help());
  CHECK_THAT(usage.str(), Catch::Contains("BIND_PORT"));
  CHECK_THAT(config::testing::HelpEntry(usage.str(), "scan-period"),
             Catch::Contains("default 1m") && Catch::Contains("file key scanPeriod"));
  absl::StatusOr<CommandLine> version = LoadConfig({"--version"}, config::NoEnv());
  REQUIRE(version.ok());
  CHECK(version->version);
}

TEST_CASE("a duration without a unit still reads as seconds, with a warning", "[lc][config]") {
  absl::StatusOr<CommandLine> loaded =
      LoadConfig({"--node=n", "--gm=g:1", "--insecure", "--scan-period", "120"}, config::NoEnv());
  REQUIRE(loaded.ok());
  CHECK(loaded->config.scan_period == absl::Minutes(2));
  REQUIRE(loaded->warnings.size() == 1);
  CHECK(loaded->warnings[0] ==
        "--scan-period: a number without a unit is read as seconds; write 2m");
}

}  // namespace
}  // namespace nereid::lc
