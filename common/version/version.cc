#include "common/version/version.h"

namespace nereid::version {
namespace internal {
extern const char kBuildCommit[];
}  // namespace internal

std::string_view Release() { return NEREID_VERSION; }

std::string_view Commit() { return internal::kBuildCommit; }

std::string VersionLine(std::string_view program) {
  std::string line(program);
  line.append(" ").append(Release()).append(" (commit ").append(Commit()).append(")");
  return line;
}

}  // namespace nereid::version
