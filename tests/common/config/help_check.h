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

// The help entry of --`name`: the line that starts with it (after the indent, or after "-h,")
// and the continuation lines under it.
inline std::string HelpEntry(const std::string& help, const std::string& name) {
  const std::vector<std::string> lines = absl::StrSplit(help, '\n');
  const std::string flag = "--" + name;
  auto starts_entry = [&flag](const std::string& line) {
    const size_t indent = line.find_first_not_of(' ');
    if (indent == std::string::npos) return false;
    size_t at = indent;
    if (line.compare(at, 3, "-h,") == 0) at += 3;
    if (line.compare(at, flag.size(), flag) != 0) return false;
    const size_t end = at + flag.size();
    return end == line.size() || !(std::isalnum(static_cast<unsigned char>(line[end])) ||
                                   line[end] == '-');
  };
  auto continues = [](const std::string& line) {
    const size_t indent = line.find_first_not_of(' ');
    return indent != std::string::npos && indent > 0 && line[indent] != '-';
  };
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!starts_entry(lines[i])) continue;
    std::string entry = lines[i];
    for (size_t j = i + 1; j < lines.size() && continues(lines[j]); ++j) entry += "\n" + lines[j];
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
