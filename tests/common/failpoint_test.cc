#include "common/failpoint/failpoint.h"

#include <catch2/catch.hpp>
#include <cstdlib>

#include "absl/time/clock.h"

namespace nereid::failpoint {
namespace {

TEST_CASE("failpoint Parse: NAME=ACTION entries, ';' or ',' separated, blanks ignored") {
  auto points = Parse(" lc-dataset-before-checkpoint = pause ; b=OFF,c=pause;; ");
  REQUIRE(points.ok());
  CHECK(points->size() == 3);
  CHECK(points->at("lc-dataset-before-checkpoint") == Action::kPause);
  CHECK(points->at("b") == Action::kOff);
  CHECK(points->at("c") == Action::kPause);

  auto empty = Parse("");
  REQUIRE(empty.ok());
  CHECK(empty->empty());
  auto later_wins = Parse("a=pause;a=off");
  REQUIRE(later_wins.ok());
  CHECK(later_wins->at("a") == Action::kOff);
}

TEST_CASE("failpoint Parse: a typo is an error, not a silently disarmed point") {
  CHECK(absl::IsInvalidArgument(Parse("lc-dataset-before-checkpoint").status()));
  CHECK(absl::IsInvalidArgument(Parse("a=paus").status()));
  CHECK(absl::IsInvalidArgument(Parse("a=").status()));
  CHECK(absl::IsInvalidArgument(Parse("=pause").status()));
  const absl::Status typo = Parse("a=pause;b=sleep(10)").status();
  CHECK(std::string(typo.message()).find("sleep(10)") != std::string::npos);
}

TEST_CASE("failpoint Hit: a no-op unless armed; a pause blocks for at most its bound") {
  DisarmAll();
  const absl::Time start = absl::Now();
  Hit(kLcDatasetBeforeCheckpoint);
  CHECK(HitCount(kLcDatasetBeforeCheckpoint) == 0);

  Arm({{kLcDatasetBeforeCheckpoint, Action::kPause}, {kLcDatasetBeforeReport, Action::kOff}},
      absl::Milliseconds(50));
  Hit(kLcDatasetBeforeReport);  // armed "off": nothing
  Hit(kLcReportAckBeforeCommit);  // not armed: nothing
  CHECK(absl::Now() - start < absl::Milliseconds(50));
  CHECK(HitCount(kLcDatasetBeforeReport) == 0);

  Hit(kLcDatasetBeforeCheckpoint);
  CHECK(HitCount(kLcDatasetBeforeCheckpoint) == 1);
  CHECK(absl::Now() - start >= absl::Milliseconds(50));

  DisarmAll();
  Hit(kLcDatasetBeforeCheckpoint);
  CHECK(HitCount(kLcDatasetBeforeCheckpoint) == 0);  // disarming resets the counts
}

TEST_CASE("failpoint InitFromEnv: unset arms nothing; a bad spec is refused") {
  DisarmAll();
  unsetenv(kEnvVar);
  CHECK(InitFromEnv().ok());
  Hit(kLcDatasetBeforeCheckpoint);
  CHECK(HitCount(kLcDatasetBeforeCheckpoint) == 0);

  setenv(kEnvVar, "lc-dataset-before-checkpoint=crash", 1);
  CHECK(absl::IsInvalidArgument(InitFromEnv()));
  setenv(kEnvVar, "lc-dataset-before-report=off", 1);
  CHECK(InitFromEnv().ok());
  unsetenv(kEnvVar);
  DisarmAll();
}

}  // namespace
}  // namespace nereid::failpoint
