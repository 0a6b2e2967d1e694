#include "bench/bench_setup.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "common/api/yaml_json.h"
#include "common/kube/resource.h"
#include "common/status/macros.h"

namespace nereid::bench {

absl::StatusOr<std::vector<std::string>> CrdFiles(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    std::error_code error;
    if (!std::filesystem::is_directory(path, error)) {
      files.push_back(path);
      continue;
    }
    std::vector<std::string> found;
    for (const auto& entry : std::filesystem::directory_iterator(path, error)) {
      if (entry.path().extension() == ".yaml") found.push_back(entry.path().string());
    }
    if (error)
      return absl::InvalidArgumentError(absl::StrCat("--crd ", path, ": ", error.message()));
    if (found.empty())
      return absl::InvalidArgumentError(absl::StrCat("--crd ", path, ": no *.yaml"));
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  return files;
}

absl::Status CreateCrds(kube::KubeClient& client, const std::vector<std::string>& paths) {
  ASSIGN_OR_RETURN(std::vector<std::string> files, CrdFiles(paths));
  for (const std::string& file : files) {
    ASSIGN_OR_RETURN(std::vector<kube::Json> crds, api::YamlFileToJson(file));
    for (const kube::Json& crd : crds) {
      RETURN_IF_ERROR(
          client.Create(kube::resources::CustomResourceDefinitions(), "", crd).status());
    }
  }
  return absl::OkStatus();
}

std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string one;
  return (in >> one) ? one : std::string("?");
}

}  // namespace nereid::bench
