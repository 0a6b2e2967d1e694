#pragma once

// The one non-cryptographic hash of the project: 64-bit FNV-1a. It tells "same bytes" apart from
// "changed" (template hashes, edge versions, a dataset checkpoint's guard) and spreads names over
// replicas (rendezvous hashing); it is never a security boundary.

#include <cstdint>
#include <string_view>

namespace nereid {

inline constexpr uint64_t kFnv1aOffsetBasis = 0xcbf29ce484222325ULL;

// FNV-1a over `data`, continuing from `hash` (chain calls to hash several pieces).
inline uint64_t Fnv1a64(std::string_view data, uint64_t hash = kFnv1aOffsetBasis) {
  for (unsigned char c : data) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

}  // namespace nereid
