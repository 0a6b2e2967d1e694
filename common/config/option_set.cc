#include "common/config/option_set.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include "CLI/CLI.hpp"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/config/values.h"
#include "common/status/macros.h"
#include "common/strings/absl_compat.h"
#include "yaml-cpp/yaml.h"

namespace nereid::config {
namespace {

constexpr char kDeprecatedGroup[] = "Older spellings (still accepted, with a warning)";

absl::Status Invalid(std::string_view where, std::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(ToAbsl(where), ": ", ToAbsl(message)));
}

// A bare number in a seconds spelling becomes "<n>s", so the current parser reads it as the old
// spelling meant and the warning shows the value in the current syntax.
std::string InCurrentSyntax(std::string value, ValueIn value_in) {
  if (value_in != ValueIn::kSeconds) return value;
  absl::StatusOr<ParsedDuration> duration = ParseDuration(value);
  // "0" is a duration without a unit in both syntaxes; written as the current one, it is "0s".
  if (!duration.ok() || !(duration->bare_seconds || value == "0")) return value;
  return DurationText(duration->value);
}

// Usage first, then the description, the options in groups and the footer.
class HelpFormatter : public CLI::Formatter {
 public:
  explicit HelpFormatter(std::string usage) : usage_(std::move(usage)) { column_width(36); }

  std::string make_help(const CLI::App* app, std::string, CLI::AppFormatMode mode) const override {
    std::string out = absl::StrCat(usage_, "\n\n");
    if (!app->get_description().empty()) absl::StrAppend(&out, app->get_description(), "\n");
    absl::StrAppend(&out, make_positionals(app), make_groups(app, mode));
    if (!app->get_footer().empty()) absl::StrAppend(&out, "\n", app->get_footer(), "\n");
    return out;
  }

 private:
  std::string usage_;
};

std::string Describe(const Option& option, std::string_view help, std::string_view env,
                     const std::vector<std::string>& keys) {
  std::vector<std::string> facts;
  if (!option.default_text().empty()) {
    facts.push_back(absl::StrCat("default ", option.default_text()));
  }
  if (!env.empty()) facts.push_back(absl::StrCat("env ", ToAbsl(env)));
  if (!keys.empty()) facts.push_back(absl::StrCat("file key ", absl::StrJoin(keys, ", ")));
  if (facts.empty()) return std::string(help);
  return absl::StrCat(ToAbsl(help), " [", absl::StrJoin(facts, "; "), "]");
}

}  // namespace

EnvLookup ProcessEnv() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

EnvLookup NoEnv() {
  return [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
}

Option& Option::Yaml(std::string key, ValueIn value_in) {
  yaml_.push_back({std::move(key), value_in, /*deprecated=*/false});
  return *this;
}

Option& Option::Env(std::string variable) {
  env_ = std::move(variable);
  return *this;
}

Option& Option::DeprecatedFlag(std::string name, ValueIn value_in) {
  old_flags_.push_back({std::move(name), value_in, /*deprecated=*/true});
  return *this;
}

Option& Option::DeprecatedYaml(std::string key, ValueIn value_in) {
  yaml_.push_back({std::move(key), value_in, /*deprecated=*/true});
  return *this;
}

struct OptionSet::Impl {
  std::string usage;
  std::string description;
  std::string footer;
  std::vector<std::unique_ptr<Option>> options;
  const Option* config_file = nullptr;
  struct Positional {
    std::string name;
    std::vector<std::string>* target = nullptr;
    std::string help;
  };
  std::optional<Positional> positional;
  struct EnvOnly {
    std::string variable;
    std::string help;
    Parser parse;
  };
  std::vector<EnvOnly> env_only;
  std::map<std::string, Parser> yaml_only;
  std::map<std::string, std::string> yaml_ignored;

  // One occurrence of a flag on the command line.
  struct FlagValue {
    const Option* option;
    const Option::Spelling* old;  // nullptr: the current spelling
    std::string value;
  };

  // The CLI11 app for these options; `flags` maps each CLI11 option back to its spelling.
  struct App {
    std::unique_ptr<CLI::App> app;
    std::map<const CLI::Option*, std::pair<const Option*, const Option::Spelling*>> flags;
    CLI::Option* help = nullptr;
    CLI::Option* version = nullptr;
    CLI::Option* positional = nullptr;
  };
  App Build(const std::string& program) const;

  absl::Status Apply(const Option& option, const Option::Spelling* spelling, std::string value,
                     std::string_view where, std::string_view current,
                     std::vector<std::string>& warnings) const;
  absl::Status LoadYaml(const std::string& path, std::vector<std::string>& warnings) const;
  absl::Status LoadYamlMap(const YAML::Node& map, const std::string& prefix,
                           const std::string& path, std::vector<std::string>& warnings) const;
};

OptionSet::Impl::App OptionSet::Impl::Build(const std::string& program) const {
  App out;
  out.app = std::make_unique<CLI::App>(description, program);
  CLI::App& app = *out.app;
  app.set_help_flag();
  app.allow_extras();
  app.formatter(std::make_shared<HelpFormatter>(usage));
  std::string text = footer;
  for (const EnvOnly& env : env_only) {
    absl::StrAppend(&text, text.empty() ? "" : "\n", "Environment ", env.variable, ": ", env.help);
  }
  app.footer(text);
  auto add = [&app](const std::string& flag, const std::string& help, Arity arity,
                    const std::string& value_name) -> CLI::Option* {
    if (arity == Arity::kValue) {
      return app.add_option(flag, CLI::callback_t{}, help)
          ->type_name(value_name)
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    }
    CLI::Option* option = app.add_flag(flag, help);
    option->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    if (arity == Arity::kSwitch) option->disable_flag_override();
    return option;
  };
  for (const auto& option : options) {
    std::vector<std::string> keys;
    for (const Option::Spelling& key : option->yaml_) {
      if (!key.deprecated) keys.push_back(key.text);
    }
    const std::string entry = Describe(*option, option->help_, option->env_, keys);
    out.flags[add("--" + option->name_, entry, option->arity_, option->value_name_)] = {
        option.get(), nullptr};
    for (const Option::Spelling& old : option->old_flags_) {
      CLI::Option* cli = add("--" + old.text, absl::StrCat("now --", option->name_),
                             option->arity_, option->value_name_);
      cli->group(kDeprecatedGroup);
      out.flags[cli] = {option.get(), &old};
    }
  }
  if (positional.has_value()) {
    out.positional = app.add_option(positional->name, CLI::callback_t{}, positional->help)
                         ->expected(0, CLI::detail::expected_max_vector_size)
                         ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  }
  const std::string help_text = "print this help and exit";
  const std::string version_text = "print the version and exit";
  out.help = app.add_flag("-h,--help", help_text);
  out.version = app.add_flag("--version", version_text);
  return out;
}

absl::Status OptionSet::Impl::Apply(const Option& option, const Option::Spelling* spelling,
                                    std::string value, std::string_view where,
                                    std::string_view current,
                                    std::vector<std::string>& warnings) const {
  if (spelling != nullptr) value = InCurrentSyntax(std::move(value), spelling->value_in);
  if (spelling != nullptr && spelling->deprecated) {
    warnings.push_back(absl::StrCat(ToAbsl(where), " is deprecated: use ", ToAbsl(current),
                                    option.arity_ == Arity::kSwitch ? "" : " ",
                                    option.arity_ == Arity::kSwitch ? "" : value));
  }
  std::string note;
  if (absl::Status parsed = option.parse_(value, &note); !parsed.ok()) {
    return Invalid(where, ToStd(parsed.message()));
  }
  if (!note.empty()) warnings.push_back(absl::StrCat(ToAbsl(where), ": ", note));
  return absl::OkStatus();
}

absl::Status OptionSet::Impl::LoadYaml(const std::string& path,
                                       std::vector<std::string>& warnings) const {
  std::ifstream in(path);
  if (!in) {
    return absl::InvalidArgumentError(
        absl::StrCat("config file ", path, ": cannot read the file (", std::strerror(errno),
                     "); a config file that cannot be read is an error, never skipped"));
  }
  std::stringstream text;
  text << in.rdbuf();
  YAML::Node root;
  try {
    root = YAML::Load(text.str());
    if (root.IsNull()) return absl::OkStatus();  // An empty file changes nothing.
    if (!root.IsMap()) {
      return absl::InvalidArgumentError(absl::StrCat("config file ", path, ": must be a YAML map"));
    }
    return LoadYamlMap(root, "", path, warnings);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("config file ", path, ": not valid YAML: ", e.what()));
  }
}

absl::Status OptionSet::Impl::LoadYamlMap(const YAML::Node& map, const std::string& prefix,
                                          const std::string& path,
                                          std::vector<std::string>& warnings) const {
  // The keys of this map: "a.b" is key b of the map under key a.
  std::map<std::string, std::pair<const Option*, const Option::Spelling*>> keys;
  for (const auto& option : options) {
    for (const Option::Spelling& key : option->yaml_) keys[key.text] = {option.get(), &key};
  }
  auto known_under = [&](const std::string& full) {
    const std::string sub = full + ".";
    auto has_prefix = [&sub](const auto& entry) { return absl::StartsWith(entry.first, sub); };
    return std::any_of(keys.begin(), keys.end(), has_prefix) ||
           std::any_of(yaml_only.begin(), yaml_only.end(), has_prefix);
  };
  for (const auto& entry : map) {
    const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : "";
    const std::string full = prefix.empty() ? key : absl::StrCat(prefix, ".", key);
    const std::string where = absl::StrCat("config file ", path, ": key ", full);
    const YAML::Node& value = entry.second;
    if (auto ignored = yaml_ignored.find(full); ignored != yaml_ignored.end()) {
      warnings.push_back(absl::StrCat(where, " is ignored: ", ignored->second));
      continue;
    }
    auto option = keys.find(full);
    auto special = yaml_only.find(full);
    if (option == keys.end() && special == yaml_only.end()) {
      if (!known_under(full)) {
        std::set<std::string> known;  // the current keys of this map
        for (const auto& [k, spelling] : keys) {
          if (spelling.second->deprecated || !(prefix.empty() || absl::StartsWith(k, prefix + "."))) {
            continue;
          }
          const std::string below = k.substr(prefix.empty() ? 0 : prefix.size() + 1);
          known.insert(below.substr(0, below.find('.')));
        }
        return Invalid(where, absl::StrCat("unknown key \"", key, "\" (known: ",
                                           absl::StrJoin(known, ", "), ")"));
      }
      if (value.IsNull()) continue;
      if (!value.IsMap()) return Invalid(where, "must be a map");
      RETURN_IF_ERROR(LoadYamlMap(value, full, path, warnings));
      continue;
    }
    if (!value.IsNull() && !value.IsScalar()) return Invalid(where, "must be a scalar value");
    const std::string text = value.IsNull() ? "" : value.Scalar();
    if (special != yaml_only.end()) {
      std::string note;
      if (absl::Status parsed = special->second(text, &note); !parsed.ok()) {
        return Invalid(where, ToStd(parsed.message()));
      }
      continue;
    }
    const auto [target, spelling] = option->second;
    std::string current;
    for (const Option::Spelling& k : target->yaml_) {
      if (!k.deprecated) current = absl::StrCat(k.text, ":");
    }
    RETURN_IF_ERROR(Apply(*target, spelling, text, where, current, warnings));
  }
  return absl::OkStatus();
}

OptionSet::OptionSet(std::string program, std::string usage, std::string description,
                     std::string footer)
    : program_(std::move(program)), impl_(std::make_unique<Impl>()) {
  impl_->usage = std::move(usage);
  impl_->description = std::move(description);
  impl_->footer = std::move(footer);
}

OptionSet::OptionSet(OptionSet&&) noexcept = default;
OptionSet& OptionSet::operator=(OptionSet&&) noexcept = default;
OptionSet::~OptionSet() = default;

Option& OptionSet::AddOption(std::string name, std::string value_name, std::string default_text,
                             std::string help, Arity arity, Parser parse) {
  auto option = std::make_unique<Option>();
  option->name_ = std::move(name);
  option->value_name_ = std::move(value_name);
  option->default_text_ = std::move(default_text);
  option->help_ = std::move(help);
  option->arity_ = arity;
  option->parse_ = std::move(parse);
  impl_->options.push_back(std::move(option));
  return *impl_->options.back();
}

Option& OptionSet::Add(std::string name, std::string* target, std::string help) {
  return AddOption(std::move(name), "TEXT", *target, std::move(help), Arity::kValue,
                   [target](std::string_view value, std::string*) {
                     *target = std::string(value);
                     return absl::OkStatus();
                   });
}

Option& OptionSet::Add(std::string name, bool* target, std::string help) {
  return AddOption(std::move(name), "", *target ? "true" : "false", std::move(help), Arity::kBool,
                   [target](std::string_view value, std::string*) -> absl::Status {
                     ASSIGN_OR_RETURN(*target, ParseBool(value));
                     return absl::OkStatus();
                   });
}

Option& OptionSet::Add(std::string name, absl::Duration* target, std::string help,
                       absl::Duration min) {
  return AddOption(
      std::move(name), "DURATION", DurationText(*target), std::move(help), Arity::kValue,
      [target, min](std::string_view value, std::string* note) -> absl::Status {
        ASSIGN_OR_RETURN(ParsedDuration parsed, ParseDuration(value));
        if (parsed.value < min) {
          return absl::InvalidArgumentError(absl::StrCat(
              ToAbsl(value), min == absl::Nanoseconds(1) ? " is not positive"
                                                         : absl::StrCat(" is less than ",
                                                                        DurationText(min))));
        }
        if (parsed.bare_seconds) {
          *note = absl::StrCat("a number without a unit is read as seconds; write ",
                               DurationText(parsed.value));
        }
        *target = parsed.value;
        return absl::OkStatus();
      });
}

Option& OptionSet::AddInteger(std::string name, int64_t default_value, std::string help,
                              int64_t min, int64_t max, std::function<void(int64_t)> store) {
  return AddOption(std::move(name), "N", absl::StrCat(default_value), std::move(help),
                   Arity::kValue,
                   [store = std::move(store), min, max](std::string_view value,
                                                        std::string*) -> absl::Status {
                     ASSIGN_OR_RETURN(int64_t parsed, ParseInt(value, min, max));
                     store(parsed);
                     return absl::OkStatus();
                   });
}

Option& OptionSet::AddSeconds(std::string name, int64_t* seconds, std::string help, int64_t min,
                              int64_t max) {
  return AddOption(
      std::move(name), "DURATION", DurationText(absl::Seconds(*seconds)), std::move(help),
      Arity::kValue,
      [seconds, min, max](std::string_view value, std::string* note) -> absl::Status {
        ASSIGN_OR_RETURN(ParsedDuration parsed, ParseDuration(value));
        if (parsed.value < absl::Seconds(min) || parsed.value > absl::Seconds(max)) {
          return absl::InvalidArgumentError(absl::StrCat(
              ToAbsl(value), " is out of range [", DurationText(absl::Seconds(min)), ", ",
              DurationText(absl::Seconds(max)), "]"));
        }
        if (parsed.value != absl::Seconds(absl::ToInt64Seconds(parsed.value))) {
          return absl::InvalidArgumentError(
              absl::StrCat(ToAbsl(value), " is not a whole number of seconds"));
        }
        if (parsed.bare_seconds) {
          *note = absl::StrCat("a number without a unit is read as seconds; write ",
                               DurationText(parsed.value));
        }
        *seconds = absl::ToInt64Seconds(parsed.value);
        return absl::OkStatus();
      });
}

Option& OptionSet::Add(std::string name, double* target, std::string help, double min) {
  return AddOption(std::move(name), "NUMBER", absl::StrCat(*target), std::move(help),
                   Arity::kValue, [target, min](std::string_view value, std::string*) {
                     double parsed = 0;
                     if (!absl::SimpleAtod(ToAbsl(value), &parsed) || !std::isfinite(parsed) ||
                         parsed < min) {
                       return absl::InvalidArgumentError(absl::StrCat(
                           "\"", ToAbsl(value), "\" is not a number >= ", min));
                     }
                     *target = parsed;
                     return absl::OkStatus();
                   });
}

Option& OptionSet::AddSeconds(std::string name, double* seconds, std::string help,
                              absl::Duration min) {
  auto duration = std::make_shared<absl::Duration>(absl::Seconds(*seconds));
  Option& option = Add(std::move(name), duration.get(), std::move(help), min);
  option.parse_ = [duration, seconds, parse = std::move(option.parse_)](
                      std::string_view value, std::string* note) -> absl::Status {
    RETURN_IF_ERROR(parse(value, note));
    *seconds = absl::ToDoubleSeconds(*duration);
    return absl::OkStatus();
  };
  return option;
}

Option& OptionSet::AddList(std::string name, std::vector<std::string>* target,
                           std::string help) {
  return AddOption(std::move(name), "TEXT", "", absl::StrCat(help, " (repeatable)"),
                   Arity::kValue, [target](std::string_view value, std::string*) {
                     target->emplace_back(value);
                     return absl::OkStatus();
                   });
}

Option& OptionSet::AddSwitch(std::string name, bool* target, bool when_given, std::string help) {
  return AddOption(std::move(name), "", "", std::move(help), Arity::kSwitch,
                   [target, when_given](std::string_view, std::string*) {
                     *target = when_given;
                     return absl::OkStatus();
                   });
}

Option& OptionSet::AddCustom(std::string name, std::string value_name, std::string default_text,
                             std::string help, Parser parse) {
  return AddOption(std::move(name), std::move(value_name), std::move(default_text),
                   std::move(help), Arity::kValue, std::move(parse));
}

Option& OptionSet::AddConfigFile(std::string name, std::string* target, std::string help) {
  Option& option = Add(std::move(name), target, std::move(help));
  option.value_name_ = "FILE";
  impl_->config_file = &option;
  return option;
}

void OptionSet::AddPositional(std::string name, std::vector<std::string>* target,
                              std::string help) {
  impl_->positional = Impl::Positional{std::move(name), target, std::move(help)};
}

void OptionSet::AddEnv(std::string variable, std::string help, Parser parse) {
  impl_->env_only.push_back({std::move(variable), std::move(help), std::move(parse)});
}

void OptionSet::AddYaml(std::string key, Parser parse) {
  impl_->yaml_only[std::move(key)] = std::move(parse);
}

void OptionSet::IgnoreYaml(std::string key, std::string why) {
  impl_->yaml_ignored[std::move(key)] = std::move(why);
}

std::vector<const Option*> OptionSet::options() const {
  std::vector<const Option*> out;
  for (const auto& option : impl_->options) out.push_back(option.get());
  return out;
}

std::string OptionSet::Help() const { return impl_->Build(program_).app->help(); }

absl::StatusOr<OptionSet::Loaded> OptionSet::Load(const std::vector<std::string>& args,
                                                  const EnvLookup& env) {
  Impl::App built = impl_->Build(program_);
  CLI::App& app = *built.app;
  // CLI11 reads "--name=" as "--name" and takes the next argument as the value; an explicitly
  // empty value ("--namespace=" for all namespaces) is split off so it stays empty.
  std::vector<std::string> reversed;
  for (auto arg = args.rbegin(); arg != args.rend(); ++arg) {
    const bool before_separator = std::find(args.begin(), arg.base() - 1, "--") == arg.base() - 1;
    if (before_separator && arg->size() > 3 && absl::StartsWith(*arg, "--") &&
        absl::EndsWith(*arg, "=")) {
      const std::string flag = arg->substr(0, arg->size() - 1);
      const bool takes_value = std::any_of(
          built.flags.begin(), built.flags.end(), [&flag](const auto& entry) {
            return entry.second.first->arity_ == Arity::kValue &&
                   entry.first->check_lname(flag.substr(2));
          });
      if (takes_value) {
        reversed.push_back("");
        reversed.push_back(flag);
        continue;
      }
    }
    reversed.push_back(*arg);
  }
  try {
    app.parse(std::move(reversed));
  } catch (const CLI::ArgumentMismatch& e) {
    // CLI11: "--listen: 1 required TEXT missing", "json was given a disallowed flag override".
    const std::string what = e.what();
    if (const size_t colon = what.find(": "); absl::StrContains(what, " required ")) {
      return absl::InvalidArgumentError(absl::StrCat(what.substr(0, colon), " needs a value"));
    }
    if (absl::StrContains(what, "flag override")) {
      const std::string name = what.substr(0, what.find(' '));
      return absl::InvalidArgumentError(
          absl::StrCat("--", name.substr(name.find_first_not_of('-')), " takes no value"));
    }
    return absl::InvalidArgumentError(absl::StrCat(what, " (see --help)"));
  } catch (const CLI::ParseError& e) {
    return absl::InvalidArgumentError(absl::StrCat(e.what(), " (see --help)"));
  }
  Loaded loaded;
  loaded.help = built.help->count() > 0;
  loaded.version = built.version->count() > 0;
  if (loaded.help || loaded.version) return loaded;
  // CLI11 (2.1) with allow_extras leaves positionals among the extras: take them from there, in
  // order; after "--" everything is one.
  std::vector<std::string> positionals = built.positional != nullptr
                                             ? built.positional->results()
                                             : std::vector<std::string>{};
  bool after_separator = false;
  for (const std::string& extra : app.remaining()) {
    if (!after_separator && extra == "--") {
      after_separator = true;
      continue;
    }
    if (!after_separator && absl::StartsWith(extra, "-") && extra.size() > 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown flag ", extra.substr(0, extra.find('=')), " (see --help)"));
    }
    if (!impl_->positional.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat("unexpected argument \"", extra, "\" (see --help)"));
    }
    positionals.push_back(extra);
  }

  // The flags in command-line order, each with the spelling it was given in.
  std::vector<Impl::FlagValue> flags;
  std::map<const CLI::Option*, size_t> seen;
  for (const CLI::Option* cli : app.parse_order()) {
    auto binding = built.flags.find(cli);
    if (binding == built.flags.end()) continue;
    const size_t index = seen[cli]++;
    if (index >= cli->results().size()) continue;
    flags.push_back({binding->second.first, binding->second.second, cli->results()[index]});
  }
  auto apply_flag = [&](const Impl::FlagValue& flag) {
    const std::string where =
        absl::StrCat("--", flag.old == nullptr ? flag.option->name_ : flag.old->text);
    return impl_->Apply(*flag.option, flag.old, flag.value, where,
                        absl::StrCat("--", flag.option->name_), loaded.warnings);
  };

  // 1. The YAML file (the last --config given).
  if (impl_->config_file != nullptr) {
    const Impl::FlagValue* config_flag = nullptr;
    for (const Impl::FlagValue& flag : flags) {
      if (flag.option == impl_->config_file) config_flag = &flag;
    }
    if (config_flag != nullptr) {
      RETURN_IF_ERROR(apply_flag(*config_flag));
      RETURN_IF_ERROR(impl_->LoadYaml(config_flag->value, loaded.warnings));
    }
  }
  // 2. The environment.
  for (const auto& option : impl_->options) {
    if (option->env_.empty()) continue;
    std::optional<std::string> value = env(option->env_);
    if (!value.has_value() || value->empty()) continue;
    RETURN_IF_ERROR(impl_->Apply(*option, nullptr, *value, absl::StrCat("env ", option->env_), "",
                                 loaded.warnings));
  }
  for (const Impl::EnvOnly& variable : impl_->env_only) {
    std::optional<std::string> value = env(variable.variable);
    if (!value.has_value() || value->empty()) continue;
    std::string note;
    if (absl::Status parsed = variable.parse(*value, &note); !parsed.ok()) {
      return Invalid(absl::StrCat("env ", variable.variable), ToStd(parsed.message()));
    }
  }
  // 3. The flags, in order.
  for (const Impl::FlagValue& flag : flags) {
    if (flag.option == impl_->config_file) continue;
    RETURN_IF_ERROR(apply_flag(flag));
  }
  if (impl_->positional.has_value()) *impl_->positional->target = std::move(positionals);
  return loaded;
}

}  // namespace nereid::config
