#pragma once

// Test support: the checked-in CRDs (deploy/crds) and examples (examples/) as JSON.

#include <string>
#include <string_view>
#include <vector>

#include "common/kube/object.h"

namespace nereid::api::testing {

// The repository root (compiled in by CMake).
std::string SourceDir();
// All documents of a YAML file under the repository root; fails the test when it does not parse.
std::vector<kube::Json> LoadYamlDocs(const std::string& relative_path);
// Every file name (not path) in a repository directory ending in `suffix`, sorted.
std::vector<std::string> ListFiles(const std::string& relative_dir, std::string_view suffix);

// deploy/crds/sedna.io_<plural>.yaml for `kind`.
kube::Json CrdFor(std::string_view kind);
// Its openAPIV3Schema.
kube::Json SchemaFor(std::string_view kind);
// Every document of every examples/*.yaml file.
std::vector<kube::Json> AllExamples();
// The example object of `kind` named `name`; fails the test if there is none.
kube::Json Example(std::string_view kind, std::string_view name);

}  // namespace nereid::api::testing
