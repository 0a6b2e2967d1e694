// The configuration layer: one registration per setting, read alike from flags, the YAML file and
// the environment; one duration syntax; older spellings accepted with a warning.

#include "common/config/option_set.h"

#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "common/config/values.h"
#include "tests/common/config/help_check.h"
#include "tests/support/subprocess.h"

namespace nereid::config {
namespace {

using Catch::Contains;

EnvLookup Env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

struct Settings {
  std::string name = "n";
  bool fast = false;
  int64_t workers = 2;
  absl::Duration period = absl::Seconds(30);
  int64_t ttl_seconds = 30;
  bool quiet = false;
  std::string config_file;
  std::vector<std::string> urls;
};

OptionSet Register(Settings& s) {
  OptionSet options("tool", "usage: tool [flags] URL...", "A tool for tests.\n", "The footer.");
  options.AddConfigFile("config", &s.config_file, "YAML file");
  options.Add("name", &s.name, "a name").Yaml("name").Env("TOOL_NAME");
  options.Add("fast", &s.fast, "go fast").Yaml("speed.fast");
  options.Add("workers", &s.workers, "workers", 1, 8).Yaml("workers");
  options.Add("period", &s.period, "a period", absl::Seconds(1)).Yaml("speed.period");
  options.AddSeconds("ttl", &s.ttl_seconds, "a ttl", 0, 3600)
      .Yaml("ttl")
      .DeprecatedFlag("ttl-seconds", ValueIn::kSeconds)
      .DeprecatedYaml("ttlSeconds", ValueIn::kSeconds);
  options.AddSwitch("quiet", &s.quiet, true, "say less");
  options.AddPositional("URL", &s.urls, "urls");
  return options;
}

struct Run {
  Settings settings;
  absl::StatusOr<OptionSet::Loaded> loaded;
};

Run Load(const std::vector<std::string>& args, const EnvLookup& env = NoEnv()) {
  Run run;
  OptionSet options = Register(run.settings);
  run.loaded = options.Load(args, env);
  return run;
}

std::string ErrorOf(const std::vector<std::string>& args) {
  Run run = Load(args);
  REQUIRE_FALSE(run.loaded.ok());
  CHECK(run.loaded.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(run.loaded.status().message());
}

TEST_CASE("durations: a number with a unit; a bare number is seconds, flagged") {
  CHECK(ParseDuration("30s")->value == absl::Seconds(30));
  CHECK(ParseDuration("5m")->value == absl::Minutes(5));
  CHECK(ParseDuration("1h")->value == absl::Hours(1));
  CHECK(ParseDuration("1m30s")->value == absl::Seconds(90));
  CHECK(ParseDuration("250ms")->value == absl::Milliseconds(250));
  CHECK_FALSE(ParseDuration("30s")->bare_seconds);
  CHECK(ParseDuration("0")->value == absl::ZeroDuration());
  CHECK_FALSE(ParseDuration("0")->bare_seconds);
  CHECK(ParseDuration("15")->value == absl::Seconds(15));
  CHECK(ParseDuration("15")->bare_seconds);
  CHECK(ParseDuration("2.5")->value == absl::Milliseconds(2500));
  for (const char* bad : {"", "soon", "5 m", "inf", "1d", "s", "nan"}) {
    INFO(bad);
    CHECK_THAT(std::string(ParseDuration(bad).status().message()), Contains("not a duration"));
  }
  CHECK(DurationText(absl::Seconds(90)) == "1m30s");
  CHECK(DurationText(absl::ZeroDuration()) == "0s");
  CHECK(DurationText(absl::Hours(1)) == "1h");

  Run run = Load({"--period", "5m", "--ttl=1h"});
  REQUIRE(run.loaded.ok());
  CHECK(run.settings.period == absl::Minutes(5));
  CHECK(run.settings.ttl_seconds == 3600);
  CHECK(run.loaded->warnings.empty());

  Run bare = Load({"--period", "90"});
  REQUIRE(bare.loaded.ok());
  CHECK(bare.settings.period == absl::Seconds(90));
  REQUIRE(bare.loaded->warnings.size() == 1);
  CHECK_THAT(bare.loaded->warnings[0], Contains("--period") && Contains("write 1m30s"));

  CHECK_THAT(ErrorOf({"--period", "soon"}), Contains("--period: \"soon\" is not a duration"));
  CHECK_THAT(ErrorOf({"--period", "500ms"}), Contains("--period: 500ms is less than 1s"));
  CHECK_THAT(ErrorOf({"--ttl", "2h"}), Contains("--ttl: 2h is out of range [0s, 1h]"));
  CHECK_THAT(ErrorOf({"--ttl", "1.5s"}), Contains("not a whole number of seconds"));
}

TEST_CASE("a deprecated spelling is accepted with a warning naming the current one") {
  Run run = Load({"--ttl-seconds", "15"});
  REQUIRE(run.loaded.ok());
  CHECK(run.settings.ttl_seconds == 15);
  REQUIRE(run.loaded->warnings.size() == 1);
  CHECK(run.loaded->warnings[0] == "--ttl-seconds is deprecated: use --ttl 15s");

  // The last spelling given wins, whichever it is.
  CHECK(Load({"--ttl-seconds=15", "--ttl", "20s"}).settings.ttl_seconds == 20);
  CHECK(Load({"--ttl", "20s", "--ttl-seconds=15"}).settings.ttl_seconds == 15);

  nereid::testing::TempDir dir = *nereid::testing::TempDir::Create("option-set-");
  const std::string path = *dir.Write("old.yaml", "ttlSeconds: 45\n");
  Run file = Load({"--config", path});
  REQUIRE(file.loaded.ok());
  CHECK(file.settings.ttl_seconds == 45);
  REQUIRE(file.loaded->warnings.size() == 1);
  CHECK_THAT(file.loaded->warnings[0],
             Contains("key ttlSeconds is deprecated: use ttl: 45s"));
}

TEST_CASE("unknown flags and stray arguments are refused with a clear error") {
  CHECK(ErrorOf({"--bogus"}) == "unknown flag --bogus (see --help)");
  CHECK(ErrorOf({"--bogus=1"}) == "unknown flag --bogus (see --help)");
  CHECK(ErrorOf({"--name", "x", "--nmae", "y"}) == "unknown flag --nmae (see --help)");
  CHECK(ErrorOf({"--name"}) == "--name needs a value");
  CHECK(ErrorOf({"--quiet=yes"}) == "--quiet takes no value");
  CHECK_THAT(ErrorOf({"--fast=maybe"}), Contains("--fast: \"maybe\" is not a boolean"));
  CHECK_THAT(ErrorOf({"--workers", "9"}), Contains("--workers: 9 is out of range [1, 8]"));
  CHECK_THAT(ErrorOf({"--workers", "two"}), Contains("is not an integer"));
}

TEST_CASE("flags, booleans, switches, positionals") {
  Run run = Load({"--name=a", "--fast", "--workers", "3", "u1", "--quiet", "u2", "--", "--u3"});
  REQUIRE(run.loaded.ok());
  CHECK(run.settings.name == "a");
  CHECK(run.settings.fast);
  CHECK(run.settings.workers == 3);
  CHECK(run.settings.quiet);
  CHECK(run.settings.urls == std::vector<std::string>{"u1", "u2", "--u3"});
  CHECK_FALSE(Load({"--fast=false"}).settings.fast);
  CHECK(Load({"--name", "a", "--name", "b"}).settings.name == "b");
  CHECK(Load({"--name="}).settings.name.empty());
}

TEST_CASE("precedence: defaults < YAML file < environment < flags") {
  nereid::testing::TempDir dir = *nereid::testing::TempDir::Create("option-set-");
  const std::string path =
      *dir.Write("tool.yaml", "name: file\nworkers: 4\nspeed: {fast: true, period: 2m}\n");
  Run file = Load({"--config", path});
  REQUIRE(file.loaded.ok());
  CHECK(file.settings.config_file == path);
  CHECK(file.settings.name == "file");
  CHECK(file.settings.workers == 4);
  CHECK(file.settings.fast);
  CHECK(file.settings.period == absl::Minutes(2));

  Run env = Load({"--config", path}, Env({{"TOOL_NAME", "env"}}));
  CHECK(env.settings.name == "env");
  Run empty_env = Load({"--config", path}, Env({{"TOOL_NAME", ""}}));
  CHECK(empty_env.settings.name == "file");
  Run flag = Load({"--name", "flag", "--config", path}, Env({{"TOOL_NAME", "env"}}));
  CHECK(flag.settings.name == "flag");

  CHECK_THAT(ErrorOf({"--config", *dir.Write("bad.yaml", "speed: {slow: 1}\n")}),
             Contains("key speed.slow: unknown key \"slow\" (known: fast, period)"));
  CHECK_THAT(ErrorOf({"--config", *dir.Write("bad.yaml", "speed: 3\n")}),
             Contains("key speed: must be a map"));
  CHECK_THAT(ErrorOf({"--config", *dir.Write("bad.yaml", "workers: [1]\n")}),
             Contains("key workers: must be a scalar value"));
  CHECK_THAT(ErrorOf({"--config", *dir.Write("bad.yaml", "workers: 0\n")}),
             Contains("key workers: 0 is out of range"));
  CHECK_THAT(ErrorOf({"--config", dir.File("missing.yaml")}), Contains("cannot be read"));
}

TEST_CASE("--help lists every option with its default; --help and --version stop loading") {
  Settings defaults;
  OptionSet options = Register(defaults);
  testing::CheckHelpListsEveryOption(options);
  const std::string help = options.Help();
  CHECK(help.rfind("usage: tool [flags] URL...", 0) == 0);
  CHECK_THAT(help, Contains("The footer."));
  CHECK_THAT(testing::HelpEntry(help, "name"),
             Contains("env TOOL_NAME") && Contains("file key name"));
  CHECK_THAT(testing::HelpEntry(help, "ttl-seconds"), Contains("now --ttl"));
  CHECK_THAT(testing::HelpEntry(help, "ttl"), Contains("default 30s"));

  Run help_run = Load({"--name", "x", "--help", "--bogus"});
  REQUIRE(help_run.loaded.ok());
  CHECK(help_run.loaded->help);
  CHECK(help_run.settings.name == "n");  // nothing applied
  Run version = Load({"--version"});
  REQUIRE(version.loaded.ok());
  CHECK(version.loaded->version);
  CHECK_FALSE(version.loaded->help);
}

}  // namespace
}  // namespace nereid::config
