#pragma once

// Rendezvous (highest random weight) hashing of node names over GM replicas: a node belongs to
// the replica with the highest weight(node, replica). When a replica joins or leaves, only the
// nodes it wins or held move (about 1/N of them), with no ring or virtual nodes to keep.
//
// The weight is a fixed function of the two names (FNV-1a over both, then a 64-bit finalizer),
// the same in every process and build, so replicas that see the same set agree on every owner.
// (absl::Hash would not do: it is seeded per process.)

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nereid::gm {

uint64_t RendezvousWeight(std::string_view node, std::string_view replica);

// The replica of `replicas` that owns `node`; "" when there is none. Ties go to the smaller name.
std::string_view RendezvousOwner(std::string_view node, const std::vector<std::string>& replicas);

}  // namespace nereid::gm
