#include <catch2/catch.hpp>

#include "common/log/log.h"

namespace nereid::log {
namespace {

TEST_CASE("ParseLevel accepts the documented names, case-insensitively") {
  Level level = Level::kInfo;
  CHECK(ParseLevel("DEBUG", &level));
  CHECK(level == Level::kDebug);
  CHECK(ParseLevel("warn", &level));
  CHECK(level == Level::kWarning);
  CHECK_FALSE(ParseLevel("loud", &level));
  CHECK(level == Level::kWarning);
}

TEST_CASE("Disabled levels do not evaluate their operands") {
  Level saved = MinLevel();
  SetMinLevel(Level::kError);
  int evaluated = 0;
  auto count = [&] { return ++evaluated; };
  LOG(INFO) << count();
  CHECK(evaluated == 0);
  SetMinLevel(Level::kDebug);
  LOG(DEBUG) << "visible " << count();
  CHECK(evaluated == 1);
  SetMinLevel(saved);
}

}  // namespace
}  // namespace nereid::log
