// deploy/crds/sedna.io_distributedjobs.yaml and examples/distributedjob.yaml: names, printer
// columns, a structural schema whose typed status fits (nothing the controller writes would be
// pruned), the list-map and CEL rules, and the example parsing, validating and fitting the schema.

#include <catch2/catch.hpp>
#include <set>
#include <string>

#include "common/job/conditions.h"
#include "common/job/distributed_job.h"
#include "tests/common/api/schema_check.h"
#include "tests/common/api/test_data.h"

namespace nereid::job {
namespace {

using kube::Json;
namespace at = api::testing;

Json Crd() {
  std::vector<Json> docs = at::LoadYamlDocs("deploy/crds/sedna.io_distributedjobs.yaml");
  REQUIRE(docs.size() == 1);
  return docs[0];
}

std::string Join(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

TEST_CASE("the DistributedJob CRD: names, scope, subresource, printer columns") {
  Json crd = Crd();
  const kube::Resource& r = DistributedJobs();
  CHECK(crd["metadata"]["name"] == r.QualifiedName());
  CHECK(crd["spec"]["group"] == "sedna.io");
  CHECK(crd["spec"]["scope"] == "Namespaced");
  const Json& names = crd["spec"]["names"];
  CHECK(names["kind"] == "DistributedJob");
  CHECK(names["plural"] == "distributedjobs");
  CHECK(names["shortNames"] == Json::array({"dj"}));
  CHECK(names["categories"] == Json::array({"sedna"}));
  const Json& version = crd["spec"]["versions"][0];
  CHECK(version["name"] == "v1alpha1");
  CHECK(version["subresources"] == Json::parse(R"({"status": {}})"));
  std::vector<std::string> columns;
  for (const Json& c : version["additionalPrinterColumns"]) {
    columns.push_back(c["name"]);
    if (c["name"] != "Age") {
      CAPTURE(c["jsonPath"]);
      CHECK(at::SchemaAt(version["schema"]["openAPIV3Schema"], c["jsonPath"]) != nullptr);
    }
  }
  CHECK(columns == std::vector<std::string>{"Phase", "Tasks", "Restarts", "Age"});
}

TEST_CASE("the DistributedJob schema is structural and holds everything the controller writes") {
  Json schema = Crd()["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
  at::SchemaLint lint = at::LintStructural(schema);
  INFO(Join(lint.errors));
  CHECK(lint.errors.empty());
  for (const std::string& path : lint.preserve_unknown_paths) {
    CAPTURE(path);
    CHECK(path.find(".template") != std::string::npos);
  }
  const Json* tasks = at::SchemaAt(schema, ".spec.tasks");
  REQUIRE(tasks != nullptr);
  CHECK((*tasks)["x-kubernetes-list-type"] == "map");
  CHECK((*tasks)["x-kubernetes-list-map-keys"] == Json::array({"name"}));
  CHECK((*tasks)["x-kubernetes-validations"].size() == 3);
  CHECK((*tasks)["items"]["properties"]["replicas"]["minimum"] == 0);

  // A full status, as JobReconciler writes it, passes unpruned.
  JobStatus st;
  absl::Time t = absl::FromUnixSeconds(1700000000);
  for (const char* type :
       {"Created", "Running", "Restarting", "Suspended", "GangSchedulingUnavailable", "Failed"}) {
    SetCondition(&st, type, kTrue, "Reason", "message", t);
  }
  st.phase = std::string(PhaseOf(st));
  st.replica_statuses["learner"] = {1, 2, 3, 4, 5};
  st.task_status["learner"] = {{"Pending", 1}, {"Running", 2}};
  st.task_summary = "learner 3/3";
  st.restarts = 5;
  st.start_time = st.completion_time = st.last_reconcile_time = t;
  Json example = at::LoadYamlDocs("examples/distributedjob.yaml")[0];
  example["status"] = st.ToJson();
  std::string errors = Join(at::CheckAgainstSchema(schema, example));
  INFO(errors);
  CHECK(errors.empty());

  // Bounds: negative replicas, unknown enums.
  Json bad = example;
  bad["spec"]["tasks"][0]["replicas"] = -1;
  bad["spec"]["tasks"][0]["restartPolicy"] = "Sometimes";
  bad["spec"]["runPolicy"]["cleanPodPolicy"] = "Some";
  std::vector<std::string> bad_errors = at::CheckAgainstSchema(schema, bad);
  INFO(Join(bad_errors));
  CHECK(bad_errors.size() == 3);
}

TEST_CASE("examples/distributedjob.yaml parses, validates and round-trips its spec") {
  std::vector<Json> docs = at::LoadYamlDocs("examples/distributedjob.yaml");
  REQUIRE(docs.size() == 1);
  auto job = DistributedJob::FromJson(docs[0]);
  REQUIRE(job.ok());
  CHECK(job->Validate().empty());
  CHECK(job->SpecToJson() == docs[0]["spec"]);
  CHECK(job->spec.TotalReplicas() == 4);
  std::set<std::string> types;
  for (const Task& t : job->spec.tasks) types.insert(std::string(TaskTypeName(t.type)));
  CHECK(types == std::set<std::string>{"learner", "collector", "evaluator"});
}

}  // namespace
}  // namespace nereid::job
