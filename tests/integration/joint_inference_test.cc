// Integration: a real devapiserver process, Sedna's CRDs and the examples applied with the real
// kubectl, and the JointInferenceService controller in-process (RestClient + shared informers +
// event recorder, real clock; the edge hub replaced by the recording FakeEdgeDispatcher).
// Deployment status is advanced through the deployments' status subresource, as the deployment
// controller would write it (the devapiserver runs no controllers but its garbage collector).
// Every wait is bounded.

#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/api/sedna_contract.h"
#include "common/kube/event_recorder.h"
#include "common/kube/resource.h"
#include "common/kube/rest_client.h"
#include "common/kube/shared_informer_factory.h"
#include "globalmanager/controllers/controller_context.h"
#include "globalmanager/controllers/joint_inference_controller.h"
#include "tests/integration/in_process_gm.h"
#include "tests/support/devapiserver_process.h"
#include "tests/support/subprocess.h"

namespace nereid::gm {
namespace {

using kube::Json;
using nereid::testing::WaitFor;

const std::string kSourceDir = NEREID_SOURCE_DIR;
constexpr absl::Duration kWait = absl::Seconds(20);
constexpr char kName[] = "helmet-detection-inference";
constexpr char kRef[] = "JointInferenceService/default/helmet-detection-inference";
const std::string kCloud = std::string(kName) + "-deployment-cloud";
const std::string kEdge = std::string(kName) + "-deployment-edge";
const std::string kService = std::string(kName) + "-cloud";

class Cluster {
 public:
  Cluster() : api_(testing::DevApiOptions("nereid-ji", kWait)), gm_(api_.client()) {
    api_.ApplyCrds({"models", "jointinferenceservices"}, api::resources::JointInferenceServices());
  }
  void StartController() {
    gm_.Add(JointInferenceController::Create(gm_.Context()));
    gm_.Start(kWait);
  }
  void StopController() { gm_.Stop(); }

  std::string Ok(std::vector<std::string> args) { return api_.KubectlOk(args); }

  Json Status() {
    return testing::StatusOf(*api_.client(), api::resources::JointInferenceServices(), kName);
  }
  bool WaitPhase(const std::string& phase) {
    Json last;
    bool ok = WaitFor(
        [&] {
          last = Status();
          return last.value("phase", "") == phase;
        },
        kWait);
    if (!ok) UNSCOPED_INFO("last status: " << last.dump());
    return ok;
  }
  absl::StatusOr<Json> Get(const kube::Resource& resource, const std::string& name) {
    return api_.client()->Get(resource, "default", name);
  }
  // What the deployment controller would write once the Deployment's pods are (not) available.
  void DeploymentStatus(const std::string& name, int available, const Json& conditions) {
    auto d = Get(kube::resources::Deployments(), name);
    REQUIRE(d.ok());
    Json status = {{"observedGeneration", kube::Generation(*d)},
                   {"replicas", 1},
                   {"availableReplicas", available},
                   {"readyReplicas", available},
                   {"conditions", conditions}};
    auto r = api_.client()->Patch(kube::resources::Deployments(), "default", name,
                                  kube::PatchType::kMerge, {{"status", status}}, "status");
    INFO(r.status().ToString());
    REQUIRE(r.ok());
  }
  bool HasEvent(const std::string& reason) {
    return testing::HasEvent(*api_.client(), kName, reason);
  }

  testing::FakeEdgeDispatcher& edge() { return gm_.edge(); }

 private:
  nereid::testing::DevApiServerProcess api_;
  testing::InProcessGm gm_;
};

std::map<std::string, std::string> Env(const Json& deployment) {
  std::map<std::string, std::string> env;
  for (const Json& e :
       deployment["spec"]["template"]["spec"]["containers"][0].value("env", Json::array())) {
    env[e["name"]] = e.value("value", "");
  }
  return env;
}

Json Cond(const std::string& type, const std::string& status, const std::string& reason) {
  return {{"type", type}, {"status", status}, {"reason", reason}, {"message", reason}};
}

Json AvailableConditions() {
  return Json::array({Cond("Available", "True", "MinimumReplicasAvailable"),
                      Cond("Progressing", "True", "NewReplicaSetAvailable")});
}

TEST_CASE("JointInferenceService end to end on devapiserver with kubectl") {
  Cluster cluster;
  cluster.StartController();
  cluster.Ok({"apply", "-f", kSourceDir + "/examples/model.yaml"});
  cluster.Ok({"apply", "-f", kSourceDir + "/examples/joint-inference-service.yaml"});

  // Deployments and the Service with Sedna's labels, env and owner; the edge node told.
  REQUIRE(WaitFor(
      [&] {
        return cluster.Get(kube::resources::Deployments(), kCloud).ok() &&
               cluster.Get(kube::resources::Deployments(), kEdge).ok() &&
               cluster.Get(kube::resources::Services(), kService).ok();
      },
      kWait));
  Json cloud = *cluster.Get(kube::resources::Deployments(), kCloud);
  Json edge = *cluster.Get(kube::resources::Deployments(), kEdge);
  Json service = *cluster.Get(kube::resources::Services(), kService);
  Json ji = *cluster.Get(api::resources::JointInferenceServices(), kName);
  for (const Json* child : {&cloud, &edge, &service}) {
    CHECK(kube::ControllerOf(*child)->uid == kube::Uid(ji));
    CHECK(kube::Label(*child, "jointinferenceservice.sedna.io/name") == kName);
  }
  CHECK(kube::Label(edge, "jointinferenceservice.sedna.io/worker-type") == "edge");
  CHECK(edge["spec"]["replicas"] == 1);
  auto edge_env = Env(edge);
  CHECK(edge_env.at("BIG_MODEL_IP") == std::string(kService) + ".default");
  CHECK(edge_env.at("BIG_MODEL_PORT") == "5000");
  CHECK(edge_env.at("HEM_NAME") == "IBT");
  CHECK(edge_env.at("HEM_PARAMETERS") ==
        R"([{"key":"threshold_img","value":"0.9"},{"key":"threshold_box","value":"0.9"}])");
  CHECK(edge_env.at("MODEL_URL") == "/home/data/data/models/joint_inference/little/yolov3_resnet18.pb");
  CHECK(edge_env.at("input_shape") == "416,736");  // the user's env is kept
  CHECK(edge_env.at("SERVICE_NAME") == kName);
  CHECK(edge_env.at("JOB_NAME") == kName);  // the SDK's ownerName
  CHECK(edge["spec"]["template"]["spec"]["nodeName"] == "edge-0");
  CHECK(Env(cloud).at("BIG_MODEL_BIND_PORT") == "5000");
  CHECK(service["spec"]["ports"][0]["name"] == "tcp-0");
  CHECK(service["spec"]["ports"][0]["port"] == 5000);
  REQUIRE(WaitFor([&] { return cluster.edge().Holds("edge-0", kRef); }, kWait));

  // Pending until both workers are available, then Running; `kubectl get ji` shows it.
  REQUIRE(cluster.WaitPhase("Pending"));
  cluster.DeploymentStatus(kCloud, 1, AvailableConditions());
  cluster.DeploymentStatus(kEdge, 1, AvailableConditions());
  REQUIRE(cluster.WaitPhase("Running"));
  CHECK(cluster.Status()["active"] == 2);
  CHECK(cluster.Ok({"get", "ji", kName, "-o", "jsonpath={.status.phase}"}) == "Running");
  REQUIRE(WaitFor([&] { return cluster.HasEvent("Running"); }, kWait));

  // Sedna #234: a Deployment whose last condition is not Progressing is not a failure.
  cluster.DeploymentStatus(kEdge, 1,
                           Json::array({Cond("Progressing", "True", "NewReplicaSetAvailable"),
                                        Cond("Available", "True", "MinimumReplicasAvailable")}));
  // A real failure, then recovery.
  cluster.DeploymentStatus(kEdge, 0,
                           Json::array({Cond("Available", "False", "MinimumReplicasUnavailable"),
                                        Cond("Progressing", "False", "ProgressDeadlineExceeded")}));
  REQUIRE(cluster.WaitPhase("Failed"));
  CHECK(cluster.Status()["failed"] == 1);
  cluster.DeploymentStatus(kEdge, 1, AvailableConditions());
  REQUIRE(cluster.WaitPhase("Running"));
  REQUIRE(WaitFor([&] { return cluster.HasEvent("Recovered"); }, kWait));

  // Edit: replicas change → the Deployment follows; the edge gets the new generation.
  cluster.Ok({"patch", "ji", kName, "--type", "merge", "-p",
              R"({"spec":{"edgeWorker":{"replicas":2}}})"});
  REQUIRE(WaitFor(
      [&] {
        auto d = cluster.Get(kube::resources::Deployments(), kEdge);
        return d.ok() && (*d)["spec"]["replicas"] == 2;
      },
      kWait));
  REQUIRE(WaitFor([&] { return cluster.edge().Get("edge-0", kRef)->version() == "2"; }, kWait));

  // hpa set → an autoscaling/v2 HPA scaling the edge Deployment; edited → updated; removed →
  // deleted, and the Deployment's replicas are the spec's again.
  const std::string hpa_name = "hpa-" + kEdge;
  const kube::Resource& hpas = kube::resources::HorizontalPodAutoscalers();
  cluster.Ok({"patch", "ji", kName, "--type", "merge", "-p",
              R"({"spec":{"edgeWorker":{"hpa":{"minReplicas":1,"maxReplicas":3,"metrics":[)"
              R"({"type":"Resource","resource":{"name":"cpu","target":)"
              R"({"type":"Utilization","averageUtilization":50}}}]}}}})"});
  REQUIRE(WaitFor([&] { return cluster.Get(hpas, hpa_name).ok(); }, kWait));
  Json hpa = *cluster.Get(hpas, hpa_name);
  CHECK(hpa["apiVersion"] == "autoscaling/v2");
  CHECK(hpa["spec"]["scaleTargetRef"]["name"] == kEdge);
  CHECK(hpa["spec"]["maxReplicas"] == 3);
  CHECK(kube::ControllerOf(hpa)->uid == kube::Uid(ji));
  // The HPA owns replicas meanwhile: a scale it made is not undone by the next reconcile (the
  // edit below; SyncChildren handles the Deployments before the HPAs).
  cluster.Ok({"scale", "deployment", kEdge, "--replicas", "4"});
  cluster.Ok({"patch", "ji", kName, "--type", "merge", "-p",
              R"({"spec":{"edgeWorker":{"hpa":{"maxReplicas":5}}}})"});
  REQUIRE(WaitFor(
      [&] {
        auto h = cluster.Get(hpas, hpa_name);
        return h.ok() && (*h)["spec"]["maxReplicas"] == 5;
      },
      kWait));
  CHECK((*cluster.Get(kube::resources::Deployments(), kEdge))["spec"]["replicas"] == 4);
  cluster.Ok({"patch", "ji", kName, "--type", "json", "-p",
              R"([{"op":"remove","path":"/spec/edgeWorker/hpa"}])"});
  REQUIRE(WaitFor([&] { return absl::IsNotFound(cluster.Get(hpas, hpa_name).status()); }, kWait));
  REQUIRE(WaitFor(
      [&] {
        auto d = cluster.Get(kube::resources::Deployments(), kEdge);
        return d.ok() && (*d)["spec"]["replicas"] == 2;
      },
      kWait));

  // A deleted child is recreated.
  cluster.Ok({"delete", "service", kService});
  REQUIRE(WaitFor([&] { return cluster.Get(kube::resources::Services(), kService).ok(); }, kWait));

  // Delete: children garbage-collected, the edge forgets the service.
  cluster.Ok({"delete", "ji", kName});
  REQUIRE(WaitFor(
      [&] {
        return absl::IsNotFound(cluster.Get(kube::resources::Deployments(), kCloud).status()) &&
               absl::IsNotFound(cluster.Get(kube::resources::Deployments(), kEdge).status()) &&
               absl::IsNotFound(cluster.Get(kube::resources::Services(), kService).status());
      },
      kWait));
  REQUIRE(WaitFor([&] { return !cluster.edge().Holds("edge-0", kRef); }, kWait));
}

TEST_CASE("JointInferenceService with a missing Model waits, then starts") {
  Cluster cluster;
  cluster.StartController();
  cluster.Ok({"apply", "-f", kSourceDir + "/examples/joint-inference-service.yaml"});
  REQUIRE(cluster.WaitPhase("Pending"));
  Json status = cluster.Status();
  bool model_not_found = false;
  for (const Json& c : status.value("conditions", Json::array())) {
    model_not_found = model_not_found ||
                      (c.value("type", "") == "SpecValid" && c.value("reason", "") == "ModelNotFound");
  }
  CHECK(model_not_found);
  CHECK_FALSE(cluster.Get(kube::resources::Deployments(), kCloud).ok());
  cluster.Ok({"apply", "-f", kSourceDir + "/examples/model.yaml"});
  REQUIRE(WaitFor([&] { return cluster.Get(kube::resources::Deployments(), kEdge).ok(); }, kWait));
}

}  // namespace
}  // namespace nereid::gm
