#pragma once

// Test support: a small checker for the CRDs' OpenAPI v3 schemas, so tests can (1) lint that a
// schema is structural the way apiextensions.k8s.io/v1 requires, and (2) validate objects against
// it as the API server would — including fields the server would silently prune, which is how a
// typed status field missing from the CRD would go unnoticed in production.

#include <string>
#include <vector>

#include "common/kube/object.h"

namespace nereid::api::testing {

struct SchemaLint {
  std::vector<std::string> errors;
  // Paths (e.g. "spec.trainSpec.template") that set x-kubernetes-preserve-unknown-fields.
  std::vector<std::string> preserve_unknown_paths;
};

// Structural rules: every node has a type; arrays have items; properties only on objects and not
// with additionalProperties; required names exist; enums and defaults match their schema; only
// known keywords and formats.
SchemaLint LintStructural(const kube::Json& schema);

// Errors (one per problem, prefixed with the field path) of `value` against `schema`. The root
// object's metadata is not checked (the API server validates ObjectMeta itself).
std::vector<std::string> CheckAgainstSchema(const kube::Json& schema, const kube::Json& value);

// The schema node at a printer-column JSONPath such as ".status.numberOfSamples", or nullptr.
const kube::Json* SchemaAt(const kube::Json& schema, const std::string& json_path);

}  // namespace nereid::api::testing
