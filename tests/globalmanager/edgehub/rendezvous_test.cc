#include "globalmanager/edgehub/rendezvous.h"

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

namespace nereid::gm {
namespace {

std::string NodeName(int i) { return "edge-" + std::to_string(i); }

TEST_CASE("rendezvous: every replica agrees, and the nodes spread evenly", "[rendezvous]") {
  const std::vector<std::string> replicas = {"gm-a", "gm-b", "gm-c"};
  const std::vector<std::string> shuffled = {"gm-c", "gm-a", "gm-b"};
  CHECK(RendezvousOwner("edge-1", {}).empty());
  CHECK(RendezvousOwner("edge-1", {"gm-a"}) == "gm-a");
  std::map<std::string, int> share;
  constexpr int kNodes = 30'000;
  for (int i = 0; i < kNodes; ++i) {
    const std::string node = NodeName(i);
    const std::string_view owner = RendezvousOwner(node, replicas);
    REQUIRE(owner == RendezvousOwner(node, shuffled));  // the order of the set does not matter
    ++share[std::string(owner)];
  }
  REQUIRE(share.size() == 3);
  for (const auto& [replica, nodes] : share) {
    INFO(replica << " owns " << nodes);
    CHECK(nodes > kNodes / 3 * 95 / 100);
    CHECK(nodes < kNodes / 3 * 105 / 100);
  }
  // A fixed function of the names, the same in every process: pinned so a change is noticed
  // (replicas of two versions would disagree during a rolling update).
  CHECK(RendezvousWeight("edge-a", "gm-a") == 11498265439507577079ULL);
  CHECK(RendezvousWeight("ab", "c") != RendezvousWeight("a", "bc"));
  CHECK(RendezvousOwner("edge-a", {"gm-a", "gm-b"}) == "gm-a");
  CHECK(RendezvousOwner("edge-c", {"gm-a", "gm-b"}) == "gm-b");
}

TEST_CASE("rendezvous: a replica that joins takes nodes only for itself, one that leaves gives "
          "only its own",
          "[rendezvous]") {
  const std::vector<std::string> two = {"gm-a", "gm-b"};
  const std::vector<std::string> three = {"gm-a", "gm-b", "gm-c"};
  int moved = 0;
  constexpr int kNodes = 9'000;
  for (int i = 0; i < kNodes; ++i) {
    const std::string node = NodeName(i);
    const std::string_view before = RendezvousOwner(node, two);
    const std::string_view after = RendezvousOwner(node, three);
    if (before == after) continue;
    REQUIRE(after == "gm-c");  // the join moved it to the newcomer, not between the others
    ++moved;
  }
  CHECK(moved > kNodes / 3 * 9 / 10);
  CHECK(moved < kNodes / 3 * 11 / 10);
}

}  // namespace
}  // namespace nereid::gm
