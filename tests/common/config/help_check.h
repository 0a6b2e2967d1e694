#ifndef NEREID_TESTS_COMMON_CONFIG_HELP_CHECK_H_
#define NEREID_TESTS_COMMON_CONFIG_HELP_CHECK_H_

// Checks that --help lists every registered option, each with its default.

#include <catch2/catch.hpp>

#include <cctype>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "common/config/option_set.h"

namespace nereid::config::testing {

// The help entry of --`name`: its line and the continuation lines under it.
inline std::string HelpEntry(const std::string& help, const std::string& name) {
  const std::vector<std::string> lines = absl::StrSplit(help, '\n');
  const std::string flag = "--" + name;
  for (size_t i = 0; i < lines.size(); ++i) {
    const size_t at = lines[i].find(flag);
    if (at == std::string::npos) continue;
    const size_t end = at + flag.size();
    if (end < lines[i].size() && (std::isalnum(lines[i][end]) || lines[i][end] == '-')) continue;
    std::string entry = lines[i];
    for (size_t j = i + 1; j < lines.size() && !lines[j].empty() &&
                           lines[j].find_first_not_of(' ') != std::string::npos &&
                           lines[j][lines[j].find_first_not_of(' ')] != '-';
         ++j) {
      entry += "\n" + lines[j];
    }
    return entry;
  }
  return "";
}

inline void CheckHelpListsEveryOption(const OptionSet& options) {
  const std::string help = options.Help();
  INFO(help);
  REQUIRE_FALSE(options.options().empty());
  for (const Option* option : options.options()) {
    const std::string entry = HelpEntry(help, option->name());
    INFO("--" << option->name());
    CHECK_FALSE(entry.empty());
    if (!option->default_text().empty()) {
      CHECK(entry.find("default " + option->default_text()) != std::string::npos);
    }
  }
  CHECK(!HelpEntry(help, "help").empty());
  CHECK(!HelpEntry(help, "version").empty());
}

}  // namespace nereid::config::testing

#endif  // NEREID_TESTS_COMMON_CONFIG_HELP_CHECK_H_
