#include "localcontroller/dataset/data_roots.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/strings/absl_compat.h"
#include "localcontroller/dataset/errors.h"

namespace nereid::lc::dataset {

std::string NormalizeHostPath(std::string_view path) {
  std::vector<absl::string_view> parts;
  for (absl::string_view part : absl::StrSplit(ToAbsl(path), '/', absl::SkipEmpty())) {
    if (part == ".") continue;
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
      continue;
    }
    parts.push_back(part);
  }
  return absl::StrCat("/", absl::StrJoin(parts, "/"));
}

DataRoots::DataRoots(const std::vector<std::string>& roots) {
  for (const std::string& root : roots) {
    std::string normalized = NormalizeHostPath(root);
    if (normalized == "/") {
      roots_.clear();
      return;
    }
    roots_.push_back(std::move(normalized));
  }
}

absl::Status DataRoots::Check(std::string_view host_path) const {
  if (roots_.empty()) return absl::OkStatus();
  const std::string path = NormalizeHostPath(host_path);
  for (const std::string& root : roots_) {
    if (path == root || absl::StartsWith(path, absl::StrCat(root, "/"))) return absl::OkStatus();
  }
  return DatasetError(Reason::kOutsideDataRoots,
                      absl::StrCat("host path ", path, " is outside the LC's data roots (",
                                   absl::StrJoin(roots_, ", "),
                                   "); mount its directory as a data root (deploy/README.md, "
                                   "\"Data roots\")"));
}

}  // namespace nereid::lc::dataset
