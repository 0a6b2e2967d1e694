#pragma once

// What a write passes through before the store keeps it (the API server's decoding, defaulting
// and validation, as far as devapiserver implements them): the body's shape and metadata types,
// names, the namespace in the body against the URL, built-in defaults, Secret stringData, the
// status a new object starts with, and CRD schemas (pruning, defaults, validation).

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "common/kube/object.h"
#include "tools/devapiserver/registry.h"
#include "tools/devapiserver/storage.h"

namespace nereid::devapi {

// "Foo.example.com" as the API server names a kind in messages.
std::string QualifiedKind(const ResourceType& type);

// metadata.name: a DNS-1123 label for namespaces and services, a subdomain otherwise (422).
absl::Status ValidateName(const ResourceType& type, const std::string& name);

// Kind, metadata types, and for built-in kinds object-valued spec/status (CRs have schemas).
absl::Status CheckShape(const ResourceType& type, const Json& object);

// Puts apiVersion/kind/metadata.namespace right; 400 when the body contradicts the URL.
absl::Status Normalize(const ResourceType& type, std::string_view ns, Json& object);

// Secrets: stringData is a write-only convenience merged into data (base64), as upstream.
void FoldStringData(const ResourceType& type, Json& object);

// Defaults applied on create and update of built-in kinds (a subset of upstream's).
void ApplyBuiltinDefaults(const ResourceType& type, Json& object);

// The status a new object starts with, as each type's PrepareForCreate sets it upstream, for the
// fields clients look at. Called before defaults and validation.
void PrepareForCreate(const ResourceType& type, Json& object);

// The status of a newly created CRD: its names accepted and Established, `now` as the time.
Json InitialCrdStatus(const Json& crd, std::string_view now);

// Schema and type-specific checks for a create or update: a CRD must describe a servable type; a
// CR is pruned, defaulted and validated against its version's schema (unknown fields per
// options.field_validation, messages into options.warnings).
absl::Status ValidateObject(const ResourceType& type, Json& object, const WriteOptions& options);

// Deployments and DaemonSets (apps/v1), as upstream's validation: spec.selector is required, not
// empty, and selects the pod template's labels; on an update (`old` set) it is immutable. A
// controller that renders another selector than the live one is refused here as on a cluster.
absl::Status ValidateWorkloadSelector(const ResourceType& type, const Json& object,
                                      const Json* old);

}  // namespace nereid::devapi
