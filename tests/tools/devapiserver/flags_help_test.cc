#include <catch2/catch.hpp>

#include "tests/common/config/help_check.h"
#include "tools/devapiserver/flags.h"

namespace nereid::devapi {
namespace {

TEST_CASE("flags: --help lists every option with its default, --version") {
  Config defaults;
  config::OptionSet options = RegisterOptions(defaults);
  config::testing::CheckHelpListsEveryOption(options);
  CHECK(Usage() == options.Help());
  CHECK_THAT(config::testing::HelpEntry(Usage(), "listen"), Catch::Contains("default 127.0.0.1:0"));
  CHECK(ParseFlags({"--version"})->version);
  CHECK_THAT(std::string(ParseFlags({"--bogus"}).status().message()),
             Catch::Contains("unknown flag --bogus"));
}

}  // namespace
}  // namespace nereid::devapi
