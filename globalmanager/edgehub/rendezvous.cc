#include "globalmanager/edgehub/rendezvous.h"

#include "common/strings/fnv1a.h"

namespace nereid::gm {
namespace {

// MurmurHash3's fmix64: spreads FNV's weak low-order mixing over all 64 bits.
uint64_t Finalize(uint64_t hash) {
  hash ^= hash >> 33;
  hash *= 0xff51afd7ed558ccdULL;
  hash ^= hash >> 33;
  hash *= 0xc4ceb9fe1a85ec53ULL;
  hash ^= hash >> 33;
  return hash;
}

}  // namespace

uint64_t RendezvousWeight(std::string_view node, std::string_view replica) {
  // The separator is a byte no DNS name holds, so ("ab", "c") and ("a", "bc") differ.
  uint64_t hash = Fnv1a64(replica);
  hash = Fnv1a64(std::string_view("\0", 1), hash);
  return Finalize(Fnv1a64(node, hash));
}

std::string_view RendezvousOwner(std::string_view node, const std::vector<std::string>& replicas) {
  std::string_view owner;
  uint64_t best = 0;
  for (const std::string& replica : replicas) {
    const uint64_t weight = RendezvousWeight(node, replica);
    if (owner.empty() || weight > best || (weight == best && replica < owner)) {
      owner = replica;
      best = weight;
    }
  }
  return owner;
}

}  // namespace nereid::gm
