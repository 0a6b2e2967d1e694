#pragma once

// The one content hash of the controllers: 64-bit FNV-1a. Used where a stable, short fingerprint
// of bytes is needed — the template hash on children (ContentHash), edge versions that cover a
// node's spec (edge_objects.h), label values and worker names that must fit Kubernetes' limits.
// Not cryptographic: it tells "same content" apart from "changed", nothing more.

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/strings/str_format.h"
#include "common/kube/object.h"

namespace nereid::gm {

inline constexpr uint64_t kFnv1aOffsetBasis = 0xcbf29ce484222325ULL;

// FNV-1a over `data`, continuing from `hash` (chain calls to hash several pieces).
inline uint64_t Fnv1a64(std::string_view data, uint64_t hash = kFnv1aOffsetBasis) {
  for (unsigned char c : data) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

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
