#pragma once

// YAML manifests -> JSON documents, the way kubectl reads them: every document of a multi-document
// stream ("---") becomes one JSON value; empty documents are skipped. Plain scalars are typed by
// the YAML 1.2 core schema (null/~, true/false, integers incl. 0x/0o, floats incl. .inf/.nan);
// quoted and block scalars are always strings, so `value: "0.6"` stays a string as Kubernetes env
// values need. Keys are always strings. Never throws: malformed YAML is an InvalidArgument with
// line/column.

#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/kube/object.h"

namespace nereid::api {

absl::StatusOr<std::vector<kube::Json>> YamlToJson(std::string_view yaml);
// Reads a file and converts it; the error names the file.
absl::StatusOr<std::vector<kube::Json>> YamlFileToJson(const std::string& path);

}  // namespace nereid::api
