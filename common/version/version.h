#ifndef NEREID_COMMON_VERSION_VERSION_H_
#define NEREID_COMMON_VERSION_VERSION_H_

#include <string>
#include <string_view>

namespace nereid::version {

// The release, semantic (MAJOR.MINOR.PATCH), set once in the top-level CMakeLists.txt.
std::string_view Release();

// The git commit the binary was built from (12 hex digits, "+dirty" when the tree had changes),
// or "unknown" when built outside a git checkout.
std::string_view Commit();

// "<program> <release> (commit <commit>)": what every binary's --version prints.
std::string VersionLine(std::string_view program);

}  // namespace nereid::version

#endif  // NEREID_COMMON_VERSION_VERSION_H_
