#include <catch2/catch.hpp>

#include <sstream>

#include "localcontroller/dataset/count_command.h"
#include "tests/common/config/help_check.h"

namespace nereid::lc::dataset {
namespace {

TEST_CASE("count --help lists every option with its default", "[cli]") {
  CountFlags defaults;
  config::OptionSet options = RegisterCountOptions(defaults);
  config::testing::CheckHelpListsEveryOption(options);
  std::ostringstream out, err;
  CHECK(RunCountCommand({"--help"}, out, err) == 0);
  CHECK(out.str() == options.Help());
  CHECK_THAT(out.str(), Catch::Contains("default 10m"));  // --timeout: the LC's download limit
}

}  // namespace
}  // namespace nereid::lc::dataset
