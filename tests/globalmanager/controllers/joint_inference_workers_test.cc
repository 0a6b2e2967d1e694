// JointInferenceService pure parts: children built from the spec, worker health and phase from
// Deployments, metrics from ownerInfo.

#include <catch2/catch.hpp>

#include "common/api/sedna_contract.h"
#include "globalmanager/controllers/joint_inference_status.h"
#include "globalmanager/controllers/joint_inference_workers.h"

namespace nereid::gm {
namespace {

using kube::Json;

Json Ji() {
  return Json::parse(R"({
    "apiVersion": "sedna.io/v1alpha1", "kind": "JointInferenceService",
    "metadata": {"name": "ji", "namespace": "ns", "uid": "u1", "generation": 1},
    "spec": {
      "edgeWorker": {
        "model": {"name": "little"},
        "hardExampleMining": {"name": "IBT",
          "parameters": [{"key": "threshold_img", "value": "0.9"}, {"key": "x", "value": "<&>"}]},
        "template": {"spec": {"nodeName": "edge-0",
          "containers": [{"name": "little", "image": "l:1",
                          "env": [{"name": "BIG_MODEL_IP", "value": "10.0.0.1"}]}]}}
      },
      "cloudWorker": {
        "model": {"name": "big"}, "replicas": 2,
        "template": {"spec": {"containers": [{"name": "big", "image": "b:1"}]}},
        "hpa": {"minReplicas": 1, "maxReplicas": 4,
                "metrics": [{"type": "Resource", "resource": {"name": "cpu",
                             "target": {"type": "Utilization", "averageUtilization": 60}}}]}
      }
    }
  })");
}

std::map<std::string, std::string> Env(const Json& deployment) {
  std::map<std::string, std::string> env;
  for (const Json& e : deployment["spec"]["template"]["spec"]["containers"][0]["env"]) {
    env[e["name"]] = e.value("value", "");
  }
  return env;
}

JiChildren Build(const Json& object, const Placement& placement) {
  absl::StatusOr<api::JointInferenceService> parsed = api::JointInferenceService::FromJson(object);
  REQUIRE(parsed.ok());
  absl::StatusOr<JiChildren> children = BuildJointInferenceChildren(
      object, *parsed, {"/models/little/l.pb", "s3://bucket/big.pb"}, placement,
      "http://localhost:9100");
  INFO(children.status().ToString());
  REQUIRE(children.ok());
  return *children;
}

TEST_CASE("HEM_PARAMETERS is Go's json.Marshal of the parameters") {
  CHECK(HemParametersJson({{"threshold_img", "0.9"}, {"threshold_box", "0.5"}}, true) ==
        R"([{"key":"threshold_img","value":"0.9"},{"key":"threshold_box","value":"0.5"}])");
  CHECK(HemParametersJson({{"a", "<&>\"\xe2\x80\xa8"}}, true) ==
        R"([{"key":"a","value":"\u003c\u0026\u003e\"\u2028"}])");
  CHECK(HemParametersJson({}, true) == "[]");
  CHECK(HemParametersJson({}, false) == "null");
}

TEST_CASE("a nodeName-bound service: cloud Deployment + Service, one edge Deployment, one HPA") {
  Placement placement{Placement::Mode::kNodeName, {"edge-0"}};
  JiChildren c = Build(Ji(), placement);
  REQUIRE(c.deployments.size() == 2);
  const Json& cloud = c.deployments[0].object;
  const Json& edge = c.deployments[1].object;
  CHECK(c.deployments[0].worker_type == "cloud");
  CHECK(kube::Name(cloud) == "ji-deployment-cloud");
  CHECK(kube::Name(edge) == "ji-deployment-edge");
  CHECK(c.edge_nodes == std::vector<std::string>{"edge-0"});

  // Cloud: HPA owns replicas; env; model from S3 passed as is.
  CHECK_FALSE(cloud["spec"].contains("replicas"));
  auto cloud_env = Env(cloud);
  CHECK(cloud_env.at("BIG_MODEL_BIND_PORT") == "5000");
  CHECK(cloud_env.at("MODEL_URL") == "/downloads/bucket/big.pb");  // storage-initializer
  CHECK(cloud_env.at("SERVICE_NAME") == "ji");
  CHECK(cloud_env.at("JOB_NAME") == "ji");
  CHECK(cloud_env.at("NAMESPACE") == "ns");
  CHECK(cloud_env.at("WORKER_NAME").rfind("cloudworker-", 0) == 0);
  CHECK(cloud_env.count("DATA_PATH_PREFIX") == 0);

  // Edge: replicas default 1; the user's BIG_MODEL_IP wins; host-path model mounted.
  CHECK(edge["spec"]["replicas"] == 1);
  auto edge_env = Env(edge);
  CHECK(edge_env.at("BIG_MODEL_IP") == "10.0.0.1");
  CHECK(edge_env.at("BIG_MODEL_PORT") == "5000");
  CHECK(edge_env.at("HEM_NAME") == "IBT");
  CHECK(edge_env.at("HEM_PARAMETERS") ==
        R"([{"key":"threshold_img","value":"0.9"},{"key":"x","value":"\u003c\u0026\u003e"}])");
  CHECK(edge_env.at("LC_SERVER") == "http://localhost:9100");
  CHECK(edge_env.at("MODEL_URL") == "/home/data/models/little/l.pb");
  CHECK(edge_env.at("DATA_PATH_PREFIX") == "/home/data");
  CHECK(edge["spec"]["template"]["spec"]["nodeName"] == "edge-0");
  CHECK(edge["spec"]["template"]["spec"]["volumes"][0]["hostPath"]["path"] == "/models/little");
  CHECK(edge["spec"]["template"]["metadata"]["labels"]["app.sedna.io"] == "ji-edge-svc");
  CHECK(edge["spec"]["selector"]["matchLabels"]["jointinferenceservice.sedna.io/worker-type"] ==
        "edge");

  // Service.
  CHECK(kube::Name(c.service) == "ji-cloud");
  CHECK(c.service["spec"]["ports"][0]["name"] == "tcp-0");
  CHECK(c.service["spec"]["ports"][0]["port"] == 5000);
  CHECK(c.service["spec"]["selector"]["jointinferenceservice.sedna.io/worker-type"] == "cloud");
  CHECK(kube::Annotation(c.service, kTemplateHashAnnotation).has_value());

  // HPA.
  REQUIRE(c.hpas.size() == 1);
  CHECK(kube::Name(c.hpas[0]) == "hpa-ji-deployment-cloud");
  CHECK(c.hpas[0]["apiVersion"] == "autoscaling/v2");
  CHECK(c.hpas[0]["spec"]["scaleTargetRef"]["name"] == "ji-deployment-cloud");
  CHECK(c.hpas[0]["spec"]["maxReplicas"] == 4);
  CHECK(c.hpas[0]["spec"]["metrics"][0]["resource"]["name"] == "cpu");
  CHECK(c.hpas[0]["metadata"]["ownerReferences"][0]["uid"] == "u1");
}

TEST_CASE("BIG_MODEL_IP defaults to the cloud Service's cluster name") {
  Json ji = Ji();
  ji["spec"]["edgeWorker"]["template"]["spec"]["containers"][0].erase("env");
  JiChildren c = Build(ji, {Placement::Mode::kNodeName, {"edge-0"}});
  CHECK(Env(c.deployments[1].object).at("BIG_MODEL_IP") == "ji-cloud.ns");
}

TEST_CASE("selector placement: one pinned edge Deployment per selected node") {
  Json ji = Ji();
  auto& spec = ji["spec"]["edgeWorker"]["template"]["spec"];
  spec.erase("nodeName");
  spec["nodeSelector"] = {{"zone", "a"}};
  JiChildren c = Build(ji, {Placement::Mode::kSelector, {"edge-a", "edge-b"}});
  REQUIRE(c.deployments.size() == 3);
  CHECK(kube::Name(c.deployments[1].object) == "ji-deployment-edge-edge-a");
  CHECK(kube::Name(c.deployments[2].object) == "ji-deployment-edge-edge-b");
  CHECK(c.deployments[2].node == "edge-b");
  CHECK(c.deployments[2].object["spec"]["template"]["spec"]["nodeName"] == "edge-b");
  CHECK(c.deployments[2].object["spec"]["selector"]["matchLabels"]["nereid.io/node"] == "edge-b");
  CHECK(c.edge_nodes == std::vector<std::string>{"edge-a", "edge-b"});

  JiChildren none = Build(ji, {Placement::Mode::kSelector, {}});
  CHECK(none.deployments.size() == 1);  // only the cloud worker
  CHECK(none.edge_nodes.empty());

  JiChildren unplaced = Build(ji, {Placement::Mode::kUnplaced, {}});
  CHECK(unplaced.deployments.size() == 2);
  CHECK(unplaced.edge_nodes.empty());
}

TEST_CASE("template problems are reported with field paths") {
  Json ji = Ji();
  ji["spec"]["cloudWorker"]["template"]["metadata"] = {
      {"labels", {{"jointinferenceservice.sedna.io/worker-type", "edge"}}}};
  absl::StatusOr<api::JointInferenceService> parsed = api::JointInferenceService::FromJson(ji);
  REQUIRE(parsed.ok());
  absl::StatusOr<JiChildren> c = BuildJointInferenceChildren(
      ji, *parsed, {"relative.pb", "/ok/big.pb"}, {Placement::Mode::kNodeName, {"edge-0"}}, "x");
  REQUIRE_FALSE(c.ok());
  std::vector<kube::StatusCause> causes = kube::Causes(c.status());
  REQUIRE(causes.size() == 2);
  CHECK(causes[0].field ==
        "spec.cloudWorker.template.metadata.labels[jointinferenceservice.sedna.io/worker-type]");
  CHECK(causes[1].field == "spec.edgeWorker.model");
  CHECK(causes[1].message.find("little") != std::string::npos);
}

Json Deployment(int64_t generation, int64_t observed, int available, const Json& conditions) {
  Json d = {{"metadata", {{"name", "d"}, {"generation", generation}}},
            {"spec", {{"replicas", 1}}},
            {"status", {{"observedGeneration", observed}, {"availableReplicas", available}}}};
  if (!conditions.is_null()) d["status"]["conditions"] = conditions;
  return d;
}

Json Cond(const std::string& type, const std::string& status, const std::string& reason) {
  return {{"type", type}, {"status", status}, {"reason", reason}, {"message", "m"}};
}

TEST_CASE("worker health: only a real failure is a failure (Sedna #234)") {
  CHECK_FALSE(AssessDeployment(nullptr).exists);

  // Rolling out, no condition yet / progressing: not available, not failed.
  Json fresh = Deployment(1, 1, 0, nullptr);
  WorkerHealth h = AssessDeployment(&fresh);
  CHECK(h.exists);
  CHECK_FALSE(h.available);
  CHECK_FALSE(h.failed);
  Json progressing = Deployment(1, 1, 0, Json::array({Cond("Progressing", "True",
                                                           "ReplicaSetUpdated")}));
  CHECK_FALSE(AssessDeployment(&progressing).failed);

  // Sedna's trap: the last condition is Available (not Progressing) on a healthy Deployment.
  Json healthy = Deployment(1, 1, 1, Json::array({Cond("Progressing", "True", "NewReplicaSetAvailable"),
                                                   Cond("Available", "True", "MinimumReplicasAvailable")}));
  CHECK(AssessDeployment(&healthy).available);

  Json deadline = Deployment(1, 1, 0, Json::array({Cond("Progressing", "False",
                                                        "ProgressDeadlineExceeded")}));
  WorkerHealth dead = AssessDeployment(&deadline);
  CHECK(dead.failed);
  CHECK(dead.problem == "ProgressDeadlineExceeded: m");

  // Stale: the deployment controller has not seen the new generation yet.
  Json stale = Deployment(2, 1, 0, deadline["status"]["conditions"]);
  CHECK_FALSE(AssessDeployment(&stale).failed);

  // A failed rollout while the old ReplicaSet still serves is not a failure of the service.
  Json old_serving = Deployment(1, 1, 1, deadline["status"]["conditions"]);
  CHECK(AssessDeployment(&old_serving).available);
  CHECK_FALSE(AssessDeployment(&old_serving).failed);

  Json quota = Deployment(1, 1, 0, Json::array({Cond("ReplicaFailure", "True", "FailedCreate")}));
  CHECK(AssessDeployment(&quota).failed);
}

TEST_CASE("phase from the workers") {
  WorkerHealth up;
  up.exists = up.available = true;
  up.available_replicas = up.desired_replicas = 1;
  WorkerHealth down;
  down.exists = true;
  WorkerHealth failed;
  failed.exists = failed.failed = true;
  failed.problem = "ProgressDeadlineExceeded";
  WorkerHealth missing;

  JiState s = ComputeJiState(up, {up});
  CHECK(s.phase == "Running");
  CHECK(s.active == 2);
  CHECK(s.failed == 0);
  s = ComputeJiState(missing, {missing});
  CHECK(s.phase == "Pending");
  CHECK(s.message.find("not created yet") != std::string::npos);
  s = ComputeJiState(up, {down});
  CHECK(s.phase == "Pending");
  CHECK(s.active == 1);
  s = ComputeJiState(failed, {up});
  CHECK(s.phase == "Failed");
  CHECK(s.failed == 1);
  CHECK(s.reason == "WorkerFailed");
  s = ComputeJiState(up, {failed, up});  // one edge node of two failed: degraded but running
  CHECK(s.phase == "Running");
  CHECK(s.failed == 1);
  CHECK(s.message.find("1 of 2 edge workers available, 1 failed") != std::string::npos);
  s = ComputeJiState(up, {failed, down});
  CHECK(s.phase == "Failed");
  s = ComputeJiState(up, {});
  CHECK(s.phase == "Pending");
  CHECK(s.reason == "NoEdgeNode");
}

TEST_CASE("metrics from ownerInfo: Sedna's shape, sorted, times dropped") {
  auto m = MetricsFromOwnerInfo(
      R"({"inferenceNumber": 10, "hardExampleNumber": 3, "uploadCloudRatio": 0.3,
          "startTime": "t0", "updateTime": "t1", "label": "x", "whole": 5.0})");
  REQUIRE(m.ok());
  REQUIRE(m->size() == 5);
  CHECK((*m)[0] == api::Metric{"hardExampleNumber", "3"});
  CHECK((*m)[1] == api::Metric{"inferenceNumber", "10"});
  CHECK((*m)[2] == api::Metric{"label", "x"});
  CHECK((*m)[3] == api::Metric{"uploadCloudRatio", "0.3"});
  CHECK((*m)[4] == api::Metric{"whole", "5"});
  CHECK(MetricsFromOwnerInfo("")->empty());
  CHECK_FALSE(MetricsFromOwnerInfo("[1]").ok());
  CHECK_FALSE(MetricsFromOwnerInfo("{bad").ok());
}

}  // namespace
}  // namespace nereid::gm
