#pragma once

// The controllers' content hash, over the project's one FNV-1a (common/strings/fnv1a.h). Used
// where a stable, short fingerprint of bytes is needed — the template hash on children
// (ContentHash), edge versions that cover a node's spec (edge_objects.h), label values and worker
// names that must fit Kubernetes' limits.

#include <string>
#include <string_view>

#include "absl/strings/str_format.h"
#include "common/kube/object.h"
#include "common/strings/fnv1a.h"

namespace nereid::gm {

// 16 lowercase hex digits of Fnv1a64(data).
inline std::string HexHash(std::string_view data) {
  return absl::StrFormat("%016x", Fnv1a64(data));
}

// Stable 16-hex-digit hash of a JSON document (over its canonical dump: object keys are sorted;
// invalid UTF-8 is replaced, never thrown), for "is this child still what the spec asks for".
inline std::string ContentHash(const kube::Json& json) {
  return HexHash(kube::DumpCompact(json));
}

}  // namespace nereid::gm
