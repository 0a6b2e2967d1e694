#ifndef NEREID_COMMON_CONFIG_OPTION_SET_H_
#define NEREID_COMMON_CONFIG_OPTION_SET_H_

// One configuration layer for every Nereid binary: each setting is registered once, with its
// target field, its help and (for the daemons) its YAML file key and environment variable, and is
// then read from all of them alike, in this order (a later source wins):
//   defaults (the target's value at registration) < YAML file (--config) < environment < flags.
// The command line is tokenised by CLI11 (`--flag value`, `--flag=value`, a bare boolean flag
// means true, `--` ends the flags); every value, from any source, is parsed by the same typed
// parser (values.h), so a flag and its file key cannot drift apart.
//
// Adding a setting is one registration next to the others (see the binary's config.cc):
//   options.Add("scan-period", &config.scan_period, "how often datasets are rescanned")
//       .Yaml("scanPeriod");
// Renaming one keeps the old spelling working with a warning that names the new one:
//   options.Add("event-drain-timeout", &config.event_drain_timeout_seconds, "...", 0, 600)
//       .Yaml("eventDrainTimeout")
//       .DeprecatedFlag("event-drain-timeout-seconds", ValueIn::kSeconds)
//       .DeprecatedYaml("eventDrainTimeoutSeconds", ValueIn::kSeconds);
// --help (generated: every option with its default, environment variable and file key) and
// --version are registered by the set itself.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace nereid::config {

// Environment lookup (injectable for tests): the value, or nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;
EnvLookup ProcessEnv();
// No environment at all (tools without environment settings, tests).
EnvLookup NoEnv();

// Stores a textual value into its target. Errors are InvalidArgument and do not name the source;
// `note` may be set to a deprecation note about the value's form (e.g. a duration without unit).
using Parser = std::function<absl::Status(std::string_view value, std::string* note)>;

// How an older spelling's value reads: as the current one's, or a bare number meaning seconds (the
// `--x-seconds N` flags and `xSeconds: N` keys of before durations had units).
enum class ValueIn { kAsIs, kSeconds };

enum class Arity {
  kValue,   // --name VALUE, --name=VALUE
  kBool,    // --name (true), --name=true|false
  kSwitch,  // --name, no value
};

class Option {
 public:
  // Also read from this YAML key ("leaderElection.leaseDuration": a key inside a map).
  Option& Yaml(std::string key, ValueIn value_in = ValueIn::kAsIs);
  // Also read from this environment variable (an empty value counts as unset).
  Option& Env(std::string variable);
  // Older spellings, still accepted, each use warned about with the current spelling.
  Option& DeprecatedFlag(std::string name, ValueIn value_in = ValueIn::kAsIs);
  Option& DeprecatedYaml(std::string key, ValueIn value_in = ValueIn::kAsIs);

  const std::string& name() const { return name_; }
  // The default as --help shows it ("" when there is none).
  const std::string& default_text() const { return default_text_; }
  Arity arity() const { return arity_; }

 private:
  friend class OptionSet;
  struct Spelling {
    std::string text;
    ValueIn value_in = ValueIn::kAsIs;
    bool deprecated = false;
  };

  std::string name_;
  std::string value_name_;
  std::string help_;
  std::string default_text_;
  Arity arity_ = Arity::kValue;
  Parser parse_;
  std::vector<Spelling> yaml_;
  std::vector<Spelling> old_flags_;
  std::string env_;
};

class OptionSet {
 public:
  // `usage` is the first line of --help ("usage: globalmanager [flags]"), `description` the text
  // under it, `footer` the text after the options.
  OptionSet(std::string program, std::string usage, std::string description,
            std::string footer = "");
  OptionSet(OptionSet&&) noexcept;
  OptionSet& operator=(OptionSet&&) noexcept;
  ~OptionSet();

  Option& Add(std::string name, std::string* target, std::string help);
  Option& Add(std::string name, bool* target, std::string help);
  Option& Add(std::string name, absl::Duration* target, std::string help,
              absl::Duration min = -absl::InfiniteDuration());
  template <typename Int>
    requires std::is_integral_v<Int> && (!std::is_same_v<Int, bool>)
  Option& Add(std::string name, Int* target, std::string help,
              int64_t min = std::numeric_limits<Int>::min(),
              int64_t max = static_cast<int64_t>(
                  std::min<uint64_t>(std::numeric_limits<Int>::max(),
                                           std::numeric_limits<int64_t>::max()))) {
    return AddInteger(std::move(name), static_cast<int64_t>(*target), std::move(help), min, max,
                      [target](int64_t v) { *target = static_cast<Int>(v); });
  }
  // A number that is no count, e.g. a rate.
  Option& Add(std::string name, double* target, std::string help, double min);
  // A duration kept as whole seconds in an integer field; --help shows "30s".
  Option& AddSeconds(std::string name, int64_t* seconds, std::string help, int64_t min,
                     int64_t max);
  // A duration kept as seconds in a double field.
  Option& AddSeconds(std::string name, double* seconds, std::string help, absl::Duration min);
  // Repeatable: each --name VALUE appends to *target.
  Option& AddList(std::string name, std::vector<std::string>* target, std::string help);
  // --name without a value sets *target to `when_given`.
  Option& AddSwitch(std::string name, bool* target, bool when_given, std::string help);
  // Any other value type: `parse` stores it; `default_text` is what --help shows.
  Option& AddCustom(std::string name, std::string value_name, std::string default_text,
                    std::string help, Parser parse);
  // The YAML file's path: read before the environment and the other flags.
  Option& AddConfigFile(std::string name, std::string* target, std::string help);
  // Arguments that are not flags (none are accepted unless this is called).
  void AddPositional(std::string name, std::vector<std::string>* target, std::string help);
  // An environment variable that is not one option (e.g. BIND_PORT sets the port of --listen).
  void AddEnv(std::string variable, std::string help, Parser parse);
  // A YAML key that is not one option: checked by `parse`, or accepted and ignored with a warning.
  void AddYaml(std::string key, Parser parse);
  void IgnoreYaml(std::string key, std::string why);

  struct Loaded {
    bool help = false;
    bool version = false;
    // Deprecated spellings used, ignored file keys: for stderr, each naming where it came from.
    std::vector<std::string> warnings;
  };
  // Applies every source to the targets. InvalidArgument names the flag, variable or file key.
  // With --help or --version nothing is applied.
  absl::StatusOr<Loaded> Load(const std::vector<std::string>& args, const EnvLookup& env);

  // The --help text: usage, description, every option with its default, footer.
  std::string Help() const;
  const std::string& program() const { return program_; }
  std::vector<const Option*> options() const;

 private:
  struct Impl;
  Option& AddOption(std::string name, std::string value_name, std::string default_text,
                    std::string help, Arity arity, Parser parse);
  Option& AddInteger(std::string name, int64_t default_value, std::string help, int64_t min,
                     int64_t max, std::function<void(int64_t)> store);

  std::string program_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nereid::config

#endif  // NEREID_COMMON_CONFIG_OPTION_SET_H_
