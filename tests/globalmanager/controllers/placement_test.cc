#include "globalmanager/controllers/placement.h"

#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace nereid::gm {
namespace {

using kube::Json;

kube::ObjectPtr Node(const std::string& name, Json labels = Json::object(),
                     Json taints = Json::array()) {
  Json node = {{"apiVersion", "v1"},
               {"kind", "Node"},
               {"metadata", {{"name", name}, {"labels", labels}}},
               {"spec", Json::object()}};
  if (!taints.empty()) node["spec"]["taints"] = taints;
  return std::make_shared<const Json>(std::move(node));
}

Json EdgeLabels(Json extra = Json::object()) {
  extra[std::string(kEdgeNodeRoleLabel)] = "";
  return extra;
}

Json RequiredAffinity(Json terms) {
  return {{"nodeAffinity",
           {{"requiredDuringSchedulingIgnoredDuringExecution", {{"nodeSelectorTerms", terms}}}}}};
}

std::vector<std::string> Place(const Json& pod_spec, const std::vector<kube::ObjectPtr>& nodes,
                               const PlacementOptions& options = {}) {
  absl::StatusOr<Placement> placement = PlacePodSpec(pod_spec, nodes, options);
  REQUIRE(placement.ok());
  return placement->nodes;
}

TEST_CASE("nodeName pins one node, whether or not a Node exists") {
  Json spec = {{"nodeName", "edge9"}, {"nodeSelector", {{"zone", "a"}}}};
  absl::StatusOr<Placement> placement = PlacePodSpec(spec, std::vector<kube::ObjectPtr>{});
  REQUIRE(placement.ok());
  CHECK(placement->mode == Placement::Mode::kNodeName);
  CHECK(placement->nodes == std::vector<std::string>{"edge9"});
  CHECK_FALSE(SelectsNodes(spec));
}

TEST_CASE("no nodeName and no selection is unplaced") {
  for (const Json& spec : {Json::object(), Json{{"nodeSelector", Json::object()}},
                           Json{{"nodeName", ""}}}) {
    absl::StatusOr<Placement> placement = PlacePodSpec(spec, {Node("edge1", EdgeLabels())});
    REQUIRE(placement.ok());
    CHECK(placement->mode == Placement::Mode::kUnplaced);
    CHECK(placement->nodes.empty());
    CHECK_FALSE(SelectsNodes(spec));
  }
}

TEST_CASE("nodeSelector over 3 nodes with 2 edge matches selects the 2, sorted") {
  std::vector<kube::ObjectPtr> nodes = {
      Node("edge-b", EdgeLabels({{"site", "factory"}})),
      Node("cloud-1", {{"site", "factory"}}),  // Matches the selector but is not an edge node.
      Node("edge-a", EdgeLabels({{"site", "factory"}})),
      Node("edge-c", EdgeLabels({{"site", "office"}})),
  };
  Json spec = {{"nodeSelector", {{"site", "factory"}}}};
  CHECK(SelectsNodes(spec));
  absl::StatusOr<Placement> placement = PlacePodSpec(spec, nodes);
  REQUIRE(placement.ok());
  CHECK(placement->mode == Placement::Mode::kSelector);
  CHECK(placement->nodes == std::vector<std::string>{"edge-a", "edge-b"});

  PlacementOptions any_node;
  any_node.edge_only = false;
  CHECK(Place(spec, nodes, any_node) == std::vector<std::string>{"cloud-1", "edge-a", "edge-b"});
}

TEST_CASE("a selector that matches nothing yet is an empty selector placement") {
  Json spec = {{"nodeSelector", {{"site", "moon"}}}};
  absl::StatusOr<Placement> placement = PlacePodSpec(spec, {Node("edge1", EdgeLabels())});
  REQUIRE(placement.ok());
  CHECK(placement->mode == Placement::Mode::kSelector);
  CHECK(placement->nodes.empty());
}

TEST_CASE("required node affinity: terms ORed, expressions ANDed, all operators") {
  std::vector<kube::ObjectPtr> nodes = {
      Node("e1", EdgeLabels({{"zone", "a"}, {"gpu", "2"}})),
      Node("e2", EdgeLabels({{"zone", "b"}, {"gpu", "8"}})),
      Node("e3", EdgeLabels({{"zone", "c"}})),
      Node("e4", EdgeLabels({{"zone", "a"}, {"gpu", "x"}})),
  };
  auto place = [&](Json terms) {
    return Place(Json{{"affinity", RequiredAffinity(terms)}}, nodes);
  };
  using V = std::vector<std::string>;
  CHECK(place(Json::array({{{"matchExpressions",
                             {{{"key", "zone"}, {"operator", "In"}, {"values", {"a", "b"}}}}}}})) ==
        V{"e1", "e2", "e4"});
  CHECK(place(Json::array({{{"matchExpressions",
                             {{{"key", "zone"}, {"operator", "NotIn"}, {"values", {"a"}}}}}}})) ==
        V{"e2", "e3"});
  CHECK(place(Json::array({{{"matchExpressions", {{{"key", "gpu"}, {"operator", "Exists"}}}}}})) ==
        V{"e1", "e2", "e4"});
  CHECK(place(Json::array(
            {{{"matchExpressions", {{{"key", "gpu"}, {"operator", "DoesNotExist"}}}}}})) ==
        V{"e3"});
  // Gt/Lt compare integers; a non-integer label value never matches.
  CHECK(place(Json::array({{{"matchExpressions",
                             {{{"key", "gpu"}, {"operator", "Gt"}, {"values", {"4"}}}}}}})) ==
        V{"e2"});
  CHECK(place(Json::array({{{"matchExpressions",
                             {{{"key", "gpu"}, {"operator", "Lt"}, {"values", {"4"}}}}}}})) ==
        V{"e1"});
  // AND inside a term.
  CHECK(place(Json::array({{{"matchExpressions",
                             {{{"key", "zone"}, {"operator", "In"}, {"values", {"a"}}},
                              {{"key", "gpu"}, {"operator", "Lt"}, {"values", {"4"}}}}}}})) ==
        V{"e1"});
  // OR across terms; an empty term matches nothing.
  CHECK(place(Json::array({Json::object(),
                           {{"matchExpressions",
                             {{{"key", "zone"}, {"operator", "In"}, {"values", {"c"}}}}}},
                           {{"matchFields",
                             {{{"key", "metadata.name"}, {"operator", "In"}, {"values", {"e2"}}}}}}})) ==
        V{"e2", "e3"});
  CHECK(place(Json::array({{{"matchFields", {{{"key", "metadata.name"},
                                               {"operator", "NotIn"},
                                               {"values", {"e2"}}}}}}})) == V{"e1", "e3", "e4"});
}

TEST_CASE("nodeSelector and affinity both apply") {
  std::vector<kube::ObjectPtr> nodes = {Node("e1", EdgeLabels({{"zone", "a"}, {"site", "x"}})),
                                        Node("e2", EdgeLabels({{"zone", "b"}, {"site", "x"}}))};
  Json spec = {{"nodeSelector", {{"site", "x"}}},
               {"affinity", RequiredAffinity(Json::array(
                                {{{"matchExpressions",
                                   {{{"key", "zone"}, {"operator", "In"}, {"values", {"b"}}}}}}}))}};
  CHECK(Place(spec, nodes) == std::vector<std::string>{"e2"});
}

TEST_CASE("taints: NoSchedule/NoExecute exclude unless tolerated; condition taints tolerated") {
  Json spec = {{"nodeSelector", {{"site", "x"}}}};
  Json labels = EdgeLabels({{"site", "x"}});
  std::vector<kube::ObjectPtr> nodes = {
      Node("plain", labels),
      Node("dedicated", labels,
           Json::array({{{"key", "dedicated"}, {"value", "ml"}, {"effect", "NoSchedule"}}})),
      Node("soft", labels,
           Json::array({{{"key", "dedicated"}, {"value", "ml"}, {"effect", "PreferNoSchedule"}}})),
      Node("unreachable", labels,
           Json::array({{{"key", "node.kubernetes.io/unreachable"}, {"effect", "NoExecute"}}})),
  };
  CHECK(Place(spec, nodes) == std::vector<std::string>{"plain", "soft", "unreachable"});

  Json tolerant = spec;
  tolerant["tolerations"] =
      Json::array({{{"key", "dedicated"}, {"operator", "Equal"}, {"value", "ml"}}});
  CHECK(Place(tolerant, nodes) ==
        std::vector<std::string>{"dedicated", "plain", "soft", "unreachable"});
  Json wrong_value = spec;
  wrong_value["tolerations"] = Json::array({{{"key", "dedicated"}, {"value", "web"}}});
  CHECK(Place(wrong_value, nodes) == std::vector<std::string>{"plain", "soft", "unreachable"});
  Json tolerate_all = spec;
  tolerate_all["tolerations"] = Json::array({{{"operator", "Exists"}}});
  CHECK(Place(tolerate_all, nodes).size() == 4);

  PlacementOptions ignore_taints;
  ignore_taints.respect_taints = false;
  CHECK(Place(spec, nodes, ignore_taints).size() == 4);
}

TEST_CASE("nodes being deleted are not selected") {
  Json node = *Node("e1", EdgeLabels({{"site", "x"}}));
  node["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z";
  std::vector<kube::ObjectPtr> nodes = {std::make_shared<const Json>(node),
                                        Node("e2", EdgeLabels({{"site", "x"}}))};
  CHECK(Place(Json{{"nodeSelector", {{"site", "x"}}}}, nodes) == std::vector<std::string>{"e2"});
}

TEST_CASE("malformed selection is InvalidArgument naming the field, never a crash") {
  auto error_of = [](const Json& spec) {
    absl::StatusOr<Placement> placement = PlacePodSpec(spec, {Node("e1", EdgeLabels())});
    REQUIRE_FALSE(placement.ok());
    CHECK(placement.status().code() == absl::StatusCode::kInvalidArgument);
    return std::string(placement.status().message());
  };
  auto expr = [](Json requirement) {
    return Json{{"affinity",
                 RequiredAffinity(Json::array({{{"matchExpressions", Json::array({requirement})}}}))}};
  };
  CHECK_THAT(error_of(Json{{"nodeSelector", {{"zone", 3}}}}),
             Catch::Contains("spec.nodeSelector.zone"));
  CHECK_THAT(error_of(expr({{"key", "zone"}, {"operator", "Near"}, {"values", {"a"}}})),
             Catch::Contains("unknown operator \"Near\""));
  CHECK_THAT(error_of(expr({{"key", "zone"}, {"operator", "In"}})),
             Catch::Contains("matchExpressions[0].values"));
  CHECK_THAT(error_of(expr({{"key", "gpu"}, {"operator", "Gt"}, {"values", {"many"}}})),
             Catch::Contains("one integer"));
  CHECK_THAT(error_of(expr({{"key", "gpu"}, {"operator", "Exists"}, {"values", {"1"}}})),
             Catch::Contains("must be empty"));
  CHECK_THAT(error_of(expr({{"operator", "Exists"}})), Catch::Contains(".key"));
  CHECK_THAT(error_of(Json{{"affinity", RequiredAffinity(Json::array())}}),
             Catch::Contains("nodeSelectorTerms"));
  CHECK_THAT(error_of(Json{{"affinity", RequiredAffinity("oops")}}),
             Catch::Contains("nodeSelectorTerms"));
  CHECK_THAT(
      error_of(Json{{"affinity",
                     RequiredAffinity(Json::array({{{"matchFields",
                                                     {{{"key", "metadata.labels"},
                                                       {"operator", "In"},
                                                       {"values", {"x"}}}}}}}))}}),
      Catch::Contains("only metadata.name"));

  absl::Status status = ValidateNodeSelection(Json{{"nodeSelector", "x"}},
                                              "spec.trainingWorkers[1].template.spec");
  CHECK_THAT(std::string(status.message()),
             Catch::Contains("spec.trainingWorkers[1].template.spec.nodeSelector"));
  CHECK(ValidateNodeSelection(Json{{"nodeSelector", {{"a", "b"}}}}).ok());
  CHECK_FALSE(NodeMatches(Json{{"nodeSelector", 1}}, *Node("e1", EdgeLabels())).ok());
}

TEST_CASE("malformed nodes are skipped") {
  std::vector<kube::ObjectPtr> nodes = {std::make_shared<const Json>(Json::array()),
                                        std::make_shared<const Json>(Json{{"metadata", 5}}),
                                        nullptr, Node("e1", EdgeLabels({{"site", "x"}}))};
  CHECK(Place(Json{{"nodeSelector", {{"site", "x"}}}}, nodes) == std::vector<std::string>{"e1"});
}

}  // namespace
}  // namespace nereid::gm
