#include "tests/common/api/test_data.h"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "common/api/sedna_contract.h"
#include "common/api/yaml_json.h"

namespace nereid::api::testing {

using kube::Json;

std::string SourceDir() { return NEREID_SOURCE_DIR; }

std::vector<Json> LoadYamlDocs(const std::string& relative_path) {
  auto docs = YamlFileToJson(SourceDir() + "/" + relative_path);
  if (!docs.ok()) throw std::runtime_error(std::string(docs.status().message()));
  return *std::move(docs);
}

std::vector<std::string> ListFiles(const std::string& relative_dir, std::string_view suffix) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(SourceDir() + "/" + relative_dir)) {
    std::string name = entry.path().filename().string();
    if (name.size() >= suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      names.push_back(name);
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

Json CrdFor(std::string_view kind) {
  const kube::Resource* resource = resources::ForKind(kind);
  if (resource == nullptr) throw std::runtime_error("no resource for kind " + std::string(kind));
  std::vector<Json> docs = LoadYamlDocs("deploy/crds/sedna.io_" + resource->resource + ".yaml");
  if (docs.size() != 1) throw std::runtime_error("expected one CRD document");
  return docs[0];
}

Json SchemaFor(std::string_view kind) {
  return CrdFor(kind)["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
}

std::vector<Json> AllExamples() {
  std::vector<Json> all;
  for (const std::string& file : ListFiles("examples", ".yaml")) {
    for (Json& doc : LoadYamlDocs("examples/" + file)) all.push_back(std::move(doc));
  }
  return all;
}

Json Example(std::string_view kind, std::string_view name) {
  for (Json& doc : AllExamples()) {
    if (kube::StringAt(doc, "kind") == kind && kube::Name(doc) == name) return doc;
  }
  throw std::runtime_error("no example " + std::string(kind) + "/" + std::string(name));
}

}  // namespace nereid::api::testing
