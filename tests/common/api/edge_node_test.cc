// deploy/crds/sedna.io_edgenodes.yaml and the typed EdgeNode status: names, cluster scope, short
// name and category, the printer columns an operator scans, a structural schema that every field
// the GM writes fits (nothing pruned).

#include "common/api/edge_node.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/common/api/schema_check.h"
#include "tests/common/api/test_data.h"

namespace nereid::api {
namespace {

using kube::Json;

Json Crd() {
  std::vector<Json> docs = testing::LoadYamlDocs("deploy/crds/sedna.io_edgenodes.yaml");
  REQUIRE(docs.size() == 1);
  return docs[0];
}

// `json` without its null members (what a merge patch of it leaves stored).
Json WithoutNulls(const Json& json) {
  if (!json.is_object() && !json.is_array()) return json;
  Json out = json.is_object() ? Json::object() : Json::array();
  for (const auto& [key, value] : json.items()) {
    if (value.is_null()) continue;
    if (json.is_object()) {
      out[key] = WithoutNulls(value);
    } else {
      out.push_back(WithoutNulls(value));
    }
  }
  return out;
}

TEST_CASE("the EdgeNode CRD: names, cluster scope, subresource, printer columns") {
  const Json crd = Crd();
  const kube::Resource& r = EdgeNodesResource();
  CHECK(crd["metadata"]["name"] == r.QualifiedName());
  CHECK(crd["spec"]["group"] == r.group);
  CHECK(crd["spec"]["scope"] == "Cluster");
  CHECK_FALSE(r.namespaced);
  const Json& names = crd["spec"]["names"];
  CHECK(names["kind"] == r.kind);
  CHECK(names["plural"] == r.resource);
  CHECK(names["shortNames"] == Json::array({"en"}));
  CHECK(names["categories"] == Json::array({"sedna"}));
  REQUIRE(crd["spec"]["versions"].size() == 1);
  const Json& version = crd["spec"]["versions"][0];
  CHECK(version["name"] == r.version);
  CHECK(version["subresources"] == Json::parse(R"({"status": {}})"));
  std::vector<std::string> columns;
  for (const Json& column : version["additionalPrinterColumns"]) {
    const Json* at = testing::SchemaAt(version["schema"]["openAPIV3Schema"],
                                       column["jsonPath"].get<std::string>());
    if (column["jsonPath"] != ".metadata.creationTimestamp") {
      CHECK(at != nullptr);  // every column reads a field the schema has
    }
    if (column.value("priority", 0) == 0) columns.push_back(column["name"].get<std::string>());
  }
  CHECK(columns == std::vector<std::string>{"Connected", "Version", "Datasets", "Models",
                                            "Workers", "Failing", "Age"});
}

TEST_CASE("the EdgeNode schema is structural and takes every status field the GM writes") {
  const Json schema = Crd()["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
  testing::SchemaLint lint = testing::LintStructural(schema);
  CHECK(lint.errors.empty());

  EdgeNodeStatus status;
  status.connected = true;
  status.since = absl::FromUnixSeconds(1'800'000'000);
  status.served_by = "gm-0";
  status.relayed = true;
  status.lc_version = "0.4.0";
  status.lc_commit = "0123456789ab+dirty";
  status.datasets = 2;
  status.models = 1;
  status.workers = 3;
  status.failing = 1;
  status.first_failing = EdgeNodeFailingObject{"Dataset", "default", "d1", "PathNotFound", "gone"};
  status.outbox_depth = 500;
  status.database_writable = false;
  Condition condition;
  condition.type = kEdgeNodeConnected;
  condition.reason = "StreamOpen";
  condition.message = "served by GM replica gm-0";
  condition.last_transition_time = status.since;
  status.conditions = {condition};
  const Json object = {{"apiVersion", "sedna.io/v1alpha1"},
                       {"kind", "EdgeNode"},
                       {"metadata", {{"name", "edge-1"}}},
                       {"status", WithoutNulls(status.ToJson())}};
  std::vector<std::string> errors = testing::CheckAgainstSchema(schema, object);
  std::string joined;
  for (const std::string& error : errors) joined += error + "\n";
  INFO(object.dump() << "\n" << joined);
  CHECK(errors.empty());
}

}  // namespace
}  // namespace nereid::api
