#include "globalmanager/controllers/edge_placements.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace nereid::gm {
namespace {

namespace v1 = edge::v1;

// Records each Upsert's node and the resource object it was handed (to see what is shared).
class RecordingDispatcher final : public EdgeDispatcher {
 public:
  struct Upserted {
    std::string node;
    std::shared_ptr<const v1::Resource> resource;
  };
  absl::Status Upsert(std::string_view node, std::shared_ptr<const v1::Resource> r) override {
    if (std::string(node) == failing) return absl::UnavailableError("node refused");
    upserts.push_back({std::string(node), std::move(r)});
    return absl::OkStatus();
  }
  absl::Status Remove(std::string_view node, const v1::ObjectRef& ref) override {
    removes.push_back({std::string(node), ref});
    return absl::OkStatus();
  }
  std::string failing;
  std::vector<Upserted> upserts;
  std::vector<std::pair<std::string, v1::ObjectRef>> removes;
};

v1::Resource Dataset(const std::string& uid, const std::string& version) {
  v1::Resource r;
  r.mutable_ref()->set_kind("Dataset");
  r.mutable_ref()->set_namespace_("default");
  r.mutable_ref()->set_name("d1");
  r.mutable_ref()->set_uid(uid);
  r.set_version(version);
  r.mutable_dataset()->set_url("/data/d1.txt");
  return r;
}

TEST_CASE("edge placements: one resource object serves every node it is sent to") {
  RecordingDispatcher edge;
  EdgePlacements placements(&edge, "dataset");
  REQUIRE(placements.Sync("default/d1", Dataset("u1", "1"), {"edge-a", "edge-b", "edge-c"}).ok());
  REQUIRE(edge.upserts.size() == 3);
  CHECK(edge.upserts[0].resource == edge.upserts[1].resource);
  CHECK(edge.upserts[1].resource == edge.upserts[2].resource);
  CHECK(placements.Nodes("default/d1") == std::set<std::string>{"edge-a", "edge-b", "edge-c"});

  // The same version again sends nothing; a node left out drops it under the ref it was sent.
  REQUIRE(placements.Sync("default/d1", Dataset("u1", "1"), {"edge-a", "edge-c"}).ok());
  CHECK(edge.upserts.size() == 3);
  REQUIRE(edge.removes.size() == 1);
  CHECK(edge.removes[0].first == "edge-b");
  CHECK(edge.removes[0].second.uid() == "u1");
  CHECK_FALSE(placements.Holds("default/d1", "edge-b"));
  CHECK(placements.Holds("default/d1", "edge-c"));
}

TEST_CASE("edge placements: a re-created object is resent to each node that holds the old one") {
  RecordingDispatcher edge;
  EdgePlacements placements(&edge, "dataset");
  REQUIRE(placements.Sync("default/d1", Dataset("u1", "1"), {"edge-a", "edge-b"}).ok());
  REQUIRE(edge.upserts.size() == 2);

  // Same name and version, another uid; edge-b refuses it this time.
  edge.failing = "edge-b";
  CHECK_FALSE(placements.Sync("default/d1", Dataset("u2", "1"), {"edge-a", "edge-b"}).ok());
  REQUIRE(edge.upserts.size() == 3);
  CHECK(edge.upserts[2].node == "edge-a");
  CHECK(edge.upserts[2].resource->ref().uid() == "u2");
  CHECK(placements.Uid("default/d1") == "u2");

  // The next Sync still resends to edge-b, which holds the old uid at the same version.
  edge.failing.clear();
  REQUIRE(placements.Sync("default/d1", Dataset("u2", "1"), {"edge-a", "edge-b"}).ok());
  REQUIRE(edge.upserts.size() == 4);
  CHECK(edge.upserts[3].node == "edge-b");
  CHECK(edge.upserts[3].resource->ref().uid() == "u2");

  // Per-node resources: each node's own, copied only when sent.
  std::map<std::string, v1::Resource> per_node{{"edge-a", Dataset("u2", "1")},
                                               {"edge-c", Dataset("u2", "2")}};
  REQUIRE(placements.Sync("default/d1", per_node).ok());
  REQUIRE(edge.upserts.size() == 5);
  CHECK(edge.upserts[4].node == "edge-c");
  CHECK(edge.removes.back().first == "edge-b");

  REQUIRE(placements.Forget("default/d1").ok());
  CHECK(placements.size() == 0);
  CHECK(placements.Uid("default/d1").empty());
}

}  // namespace
}  // namespace nereid::gm
