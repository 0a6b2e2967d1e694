// The binaries' command lines end to end: --version of each prints its version line and exits 0;
// a deprecated form reaches stderr as a warning naming the current one; an unknown flag exits 2.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "common/version/version.h"
#include "tests/support/subprocess.h"

namespace nereid {
namespace {

using Catch::Contains;

testing::CommandResult Run(const std::vector<std::string>& argv) {
  absl::StatusOr<testing::CommandResult> result = testing::RunCommand(argv, absl::Seconds(30));
  REQUIRE(result.ok());
  REQUIRE_FALSE(result->timed_out);
  return *result;
}

TEST_CASE("--version prints the version line of every binary and exits 0") {
  struct Binary {
    std::vector<std::string> argv;
    std::string program;
  };
  for (const Binary& binary : {Binary{{NEREID_GM_BIN, "--version"}, "globalmanager"},
                               Binary{{NEREID_LC_BIN, "--version"}, "localcontroller"},
                               Binary{{NEREID_LC_BIN, "count", "--version"}, "localcontroller"},
                               Binary{{NEREID_DEVAPISERVER_BIN, "--version"}, "devapiserver"}}) {
    testing::CommandResult result = Run(binary.argv);
    INFO(binary.argv[0] << " " << binary.argv[1] << "\n" << result.err);
    CHECK(result.exit_code == 0);
    CHECK(result.out == version::VersionLine(binary.program) + "\n");
    CHECK_THAT(result.out, Contains(std::string(version::Release())));
  }
}

TEST_CASE("a deprecated form is warned about on stderr; an unknown flag exits 2") {
  testing::TempDir dir = *testing::TempDir::Create("config-binaries-");
  const std::string file = *dir.Write("a.txt", "one\ntwo\n");
  testing::CommandResult count = Run({NEREID_LC_BIN, "count", "--format", "txt", "--host-root",
                                      dir.path(), "--timeout", "30", "/a.txt"});
  CHECK(count.exit_code == 0);
  CHECK(count.out == "2\n");
  CHECK_THAT(count.err, Contains("--timeout: a number without a unit is read as seconds; "
                                 "write 30s"));

  testing::CommandResult gm = Run({NEREID_GM_BIN, "--insecure", "--lisen", "127.0.0.1:0"});
  CHECK(gm.exit_code == 2);
  CHECK_THAT(gm.err, Contains("unknown flag --lisen (see --help)"));
  testing::CommandResult lc = Run({NEREID_LC_BIN, "--node", "n", "--gm", "g:1", "--bogus"});
  CHECK(lc.exit_code == 2);
  CHECK_THAT(lc.err, Contains("unknown flag --bogus"));
}

}  // namespace
}  // namespace nereid
