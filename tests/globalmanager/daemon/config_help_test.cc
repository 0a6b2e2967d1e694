// The GM's --help lists every setting with its default; renamed flags and keys still work, warned.

#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "globalmanager/config.h"
#include "tests/common/config/help_check.h"
#include "tests/support/subprocess.h"

namespace nereid::gm {
namespace {

using Catch::Contains;

EnvLookup NoEnv() { return config::NoEnv(); }

TEST_CASE("--help lists every GM option with its default") {
  GmConfig defaults;
  config::OptionSet options = RegisterOptions(defaults);
  config::testing::CheckHelpListsEveryOption(options);
  std::ostringstream usage;
  PrintUsage(usage);
  CHECK(usage.str() == options.Help());
  CHECK_THAT(usage.str(), Contains("default 0.0.0.0:9000"));
  CHECK(LoadConfig({"--version"}, NoEnv())->version);
}

TEST_CASE("the GM's *-seconds spellings still work, each warned about with its duration form") {
  absl::StatusOr<CommandLine> loaded = LoadConfig(
      {"--insecure", "--min-resync-period-seconds", "20", "--secret-cache-ttl-seconds=0",
       "--event-drain-timeout-seconds", "3", "--edge-max-connection-wait-seconds", "4"},
      NoEnv());
  REQUIRE(loaded.ok());
  CHECK(loaded->config.min_resync_period_seconds == 20);
  CHECK(loaded->config.secret_cache_ttl_seconds == 0);
  CHECK(loaded->config.event_drain_timeout_seconds == 3);
  CHECK(loaded->config.edge_max_connection_wait_seconds == 4);
  CHECK(loaded->warnings == std::vector<std::string>{
                                "--min-resync-period-seconds is deprecated: use "
                                "--min-resync-period 20s",
                                "--secret-cache-ttl-seconds is deprecated: use "
                                "--secret-cache-ttl 0s",
                                "--event-drain-timeout-seconds is deprecated: use "
                                "--event-drain-timeout 3s",
                                "--edge-max-connection-wait-seconds is deprecated: use "
                                "--edge-max-connection-wait 4s"});

  absl::StatusOr<CommandLine> current = LoadConfig(
      {"--insecure", "--min-resync-period=1m", "--secret-cache-ttl", "10s", "--lease-duration",
       "30s", "--renew-deadline", "20s", "--retry-period", "5s", "--edge-keepalive-time", "1m"},
      NoEnv());
  REQUIRE(current.ok());
  CHECK(current->warnings.empty());
  CHECK(current->config.min_resync_period_seconds == 60);
  CHECK(current->config.secret_cache_ttl_seconds == 10);
  CHECK(current->config.leader_election.lease_duration == absl::Seconds(30));
  CHECK(current->config.leader_election.retry_period == absl::Seconds(5));
  CHECK(current->config.edge_keepalive.time == absl::Minutes(1));

  testing::TempDir dir = *testing::TempDir::Create("gm-config-");
  absl::StatusOr<CommandLine> file = LoadConfig(
      {"--insecure", "--config",
       *dir.Write("gm.yaml", "secretCacheTTL: 2m\neventDrainTimeoutSeconds: 7\n"
                             "edgeMaxConnectionWait: 5s\nminResyncPeriodSeconds: 45\n")},
      NoEnv());
  REQUIRE(file.ok());
  CHECK(file->config.secret_cache_ttl_seconds == 120);
  CHECK(file->config.event_drain_timeout_seconds == 7);
  CHECK(file->config.edge_max_connection_wait_seconds == 5);
  CHECK(file->config.min_resync_period_seconds == 45);  // Sedna's key: not deprecated
  REQUIRE(file->warnings.size() == 1);
  CHECK_THAT(file->warnings[0], Contains("key eventDrainTimeoutSeconds is deprecated: use "
                                         "eventDrainTimeout: 7s"));
}

}  // namespace
}  // namespace nereid::gm
