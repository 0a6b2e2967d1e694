// Writes the goldens of the current release into a new directory: one <name>.binpb per wire
// message of the release's builders, and the LC database lc.sqlite. Run once per release
// (tests/compat/README.md); the tests only ever read them.
//
//   build/tests/compat/write_goldens tests/compat/golden/<release>

#include <sys/stat.h>

#include <cstdio>
#include <string>

#include "common/version/version.h"
#include "tests/compat/golden_database.h"
#include "tests/compat/golden_files.h"
#include "tests/compat/release_0_1_0.h"

int main(int argc, char** argv) {
  using namespace nereid::compat;  // NOLINT: a one-file tool
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR  (writes the goldens of release %s into DIR)\n", argv[0],
                 std::string(nereid::version::Release()).c_str());
    return 2;
  }
  const std::string dir = argv[1];
  if (mkdir(dir.c_str(), 0755) != 0) {
    std::perror(("mkdir " + dir + " (it must not exist: goldens are never rewritten)").c_str());
    return 1;
  }
  for (const auto& [name, message] : release_0_1_0::Requests()) {
    if (absl::Status s = WriteFile(GoldenPath(dir, name), Encode(message)); !s.ok()) {
      std::fprintf(stderr, "%s\n", s.ToString().c_str());
      return 1;
    }
  }
  for (const auto& [name, message] : release_0_1_0::Responses()) {
    if (absl::Status s = WriteFile(GoldenPath(dir, name), Encode(message)); !s.ok()) {
      std::fprintf(stderr, "%s\n", s.ToString().c_str());
      return 1;
    }
  }
  if (absl::Status s = WriteGoldenDatabase(dir + "/" + kGoldenDatabase); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  std::printf("wrote the goldens of release %s into %s\n",
              std::string(nereid::version::Release()).c_str(), dir.c_str());
  return 0;
}
