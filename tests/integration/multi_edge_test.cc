// Integration: a real devapiserver process, the CRDs and examples applied with the real kubectl,
// and the FeatureExtractionService, ObjectSearchService and ObjectTrackingService controllers
// in-process (RestClient + shared informers + event recorder, real clock; the edge hub replaced
// by the recording FakeEdgeDispatcher). Deployment and pod status are written through their status
// subresources, as the deployment controller and the kubelet would (the devapiserver runs no
// controllers but its garbage collector). Every wait is bounded.

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
#include "globalmanager/controllers/feature_extraction_controller.h"
#include "globalmanager/controllers/tracking_pipeline_controller.h"
#include "tests/integration/in_process_gm.h"
#include "tests/support/devapiserver_process.h"
#include "tests/support/subprocess.h"

namespace nereid::gm {
namespace {

using kube::Json;
using nereid::testing::WaitFor;

const std::string kSourceDir = NEREID_SOURCE_DIR;
constexpr absl::Duration kWait = absl::Seconds(20);
const kube::Resource& Deployments() { return kube::resources::Deployments(); }
const kube::Resource& Services() { return kube::resources::Services(); }
const kube::Resource& Pods() { return kube::resources::Pods(); }

class Cluster {
 public:
  Cluster() : api_(testing::DevApiOptions("nereid-multiedge", kWait)), gm_(api_.client()) {
    api_.ApplyCrds({"models"}, api::resources::Models());
    api_.ApplyCrds({"featureextractionservices"}, api::resources::FeatureExtractionServices());
    api_.ApplyCrds({"objectsearchservices"}, api::resources::ObjectSearchServices());
    api_.ApplyCrds({"objecttrackingservices"}, api::resources::ObjectTrackingServices());
    const ControllerContext context = gm_.Context();
    gm_.Add(FeatureExtractionController::Create(context));
    gm_.Add(ObjectSearchController::Create(context));
    gm_.Add(ObjectTrackingController::Create(context));
    gm_.Start(kWait);
  }

  std::string Ok(std::vector<std::string> args) { return api_.KubectlOk(args); }
  absl::StatusOr<Json> Get(const kube::Resource& resource, const std::string& name) {
    return api_.client()->Get(resource, "default", name);
  }
  bool Exists(const kube::Resource& resource, const std::string& name) {
    return Get(resource, name).ok();
  }
  bool Gone(const kube::Resource& resource, const std::string& name) {
    return absl::IsNotFound(Get(resource, name).status());
  }
  std::string Phase(const std::string& kind_short, const std::string& name) {
    nereid::testing::CommandResult r = api_.Kubectl({"get", kind_short, name, "-o", "jsonpath={.status.phase}"});
    return r.exit_code == 0 ? r.out : "";
  }
  bool WaitPhase(const std::string& kind_short, const std::string& name, const std::string& phase) {
    std::string last;
    bool ok = WaitFor(
        [&] {
          last = Phase(kind_short, name);
          return last == phase;
        },
        kWait);
    if (!ok) UNSCOPED_INFO(kind_short << " " << name << " phase: " << last);
    return ok;
  }
  void PatchStatus(const kube::Resource& resource, const std::string& name, const Json& status) {
    auto r = api_.client()->Patch(resource, "default", name, kube::PatchType::kMerge,
                                  {{"status", status}}, "status");
    INFO(r.status().ToString());
    REQUIRE(r.ok());
  }
  // What the deployment controller writes once the Deployment's pods are (not) available.
  void DeploymentAvailable(const std::string& name, bool available) {
    auto d = Get(Deployments(), name);
    REQUIRE(d.ok());
    Json conditions =
        available
            ? Json::array({Cond("Available", "True", "MinimumReplicasAvailable"),
                           Cond("Progressing", "True", "NewReplicaSetAvailable")})
            : Json::array({Cond("Available", "False", "MinimumReplicasUnavailable"),
                           Cond("Progressing", "False", "ProgressDeadlineExceeded")});
    PatchStatus(Deployments(), name,
                {{"observedGeneration", kube::Generation(*d)},
                 {"replicas", 1},
                 {"availableReplicas", available ? 1 : 0},
                 {"conditions", conditions}});
  }
  // The pods of a service (by its name label), by name.
  std::map<std::string, Json> PodsOf(const std::string& label_key, const std::string& name) {
    std::map<std::string, Json> pods;
    auto list = api_.client()->List(Pods(), "default", {});
    if (!list.ok()) return pods;
    for (const Json& p : list->items) {
      if (kube::Label(p, label_key) == name && !kube::IsBeingDeleted(p)) pods[kube::Name(p)] = p;
    }
    return pods;
  }
  bool HasEvent(const std::string& object, const std::string& reason) {
    return testing::HasEvent(*api_.client(), object, reason);
  }
  testing::FakeEdgeDispatcher& edge() { return gm_.edge(); }

 private:
  static Json Cond(const std::string& type, const std::string& status, const std::string& reason) {
    return {{"type", type}, {"status", status}, {"reason", reason}, {"message", reason}};
  }

  nereid::testing::DevApiServerProcess api_;
  testing::InProcessGm gm_;
};

std::map<std::string, std::string> Env(const Json& pod_spec) {
  std::map<std::string, std::string> env;
  for (const Json& e : pod_spec["containers"][0].value("env", Json::array())) {
    env[e["name"]] = e.value("value", "");
  }
  return env;
}

TEST_CASE("FeatureExtractionService end to end on devapiserver with kubectl") {
  Cluster cluster;
  const std::string name = "feature-extraction";
  const std::string deployment = name + "-deployment-fe";
  const std::string service = name + "-fe";
  // The FE first: its Model appears later, and the service waits for it.
  cluster.Ok({"apply", "-f", kSourceDir + "/examples/feature-extraction-service.yaml"});
  REQUIRE(cluster.WaitPhase("fe", name, "Pending"));
  REQUIRE(WaitFor([&] { return cluster.HasEvent(name, "ModelNotFound"); }, kWait));
  CHECK_FALSE(cluster.Exists(Deployments(), deployment));
  cluster.Ok({"apply", "-f", kSourceDir + "/examples/model.yaml"});
  REQUIRE(WaitFor(
      [&] { return cluster.Exists(Deployments(), deployment) && cluster.Exists(Services(), service); },
      kWait));

  Json fe = *cluster.Get(api::resources::FeatureExtractionServices(), name);
  Json d = *cluster.Get(Deployments(), deployment);
  Json s = *cluster.Get(Services(), service);
  for (const Json* child : {&d, &s}) {
    CHECK(kube::ControllerOf(*child)->uid == kube::Uid(fe));
    CHECK(kube::Label(*child, "featureextractionservice.sedna.io/name") == name);
    CHECK(kube::Label(*child, "featureextractionservice.sedna.io/worker-type") == "fe");
  }
  CHECK(s["spec"]["ports"][0]["port"] == 6000);
  CHECK(s["spec"]["ports"][0]["name"] == "tcp-0");
  auto env = Env(d["spec"]["template"]["spec"]);
  CHECK(env.at("MODEL_URL") == "/home/data/data/ai_models/m3l/m3l.pth");
  CHECK(env.at("KAFKA_ENABLED") == "true");
  CHECK(env.at("SERVICE_NAME") == name);
  CHECK(env.at("JOB_NAME") == name);
  CHECK(env.at("KAFKA_BIND_IPS") == "kafka-service");  // The user's env is kept.
  REQUIRE(WaitFor(
      [&] { return cluster.edge().Holds("edge-0", "Worker/default/" + deployment); }, kWait));

  // Truthful status: Running from the Deployment, `kubectl get sedna` shows it.
  cluster.DeploymentAvailable(deployment, true);
  REQUIRE(cluster.WaitPhase("fe", name, "Running"));
  CHECK(cluster.Ok({"get", "sedna"}).find("featureextractionservice.sedna.io/" + name) !=
        std::string::npos);
  cluster.DeploymentAvailable(deployment, false);
  REQUIRE(cluster.WaitPhase("fe", name, "Failed"));
  cluster.DeploymentAvailable(deployment, true);
  REQUIRE(cluster.WaitPhase("fe", name, "Running"));
  REQUIRE(WaitFor([&] { return cluster.HasEvent(name, "Recovered"); }, kWait));

  // Edits reach the Deployment; a deleted Service comes back; deletion collects the children.
  cluster.Ok({"patch", "fe", name, "--type", "merge", "-p", R"({"spec":{"replicas":3}})"});
  REQUIRE(WaitFor(
      [&] {
        auto got = cluster.Get(Deployments(), deployment);
        return got.ok() && (*got)["spec"]["replicas"] == 3;
      },
      kWait));
  cluster.Ok({"delete", "service", service});
  REQUIRE(WaitFor([&] { return cluster.Exists(Services(), service); }, kWait));
  cluster.Ok({"delete", "fe", name});
  REQUIRE(WaitFor(
      [&] { return cluster.Gone(Deployments(), deployment) && cluster.Gone(Services(), service); },
      kWait));
  REQUIRE(WaitFor(
      [&] { return !cluster.edge().Holds("edge-0", "Worker/default/" + deployment); }, kWait));
}

TEST_CASE("ObjectSearchService end to end on devapiserver with kubectl") {
  Cluster cluster;
  const std::string name = "pedestrian-search";
  const std::string label = "objectsearchservice.sedna.io/name";
  cluster.Ok({"apply", "-f", kSourceDir + "/examples/object-search-service.yaml"});
  REQUIRE(WaitFor(
      [&] {
        return cluster.Exists(Deployments(), name + "-deployment-reidworker") &&
               cluster.Exists(Deployments(), name + "-deployment-userworker") &&
               cluster.Exists(Services(), name + "-reidworker") &&
               cluster.Exists(Services(), name + "-userworker") &&
               cluster.PodsOf(label, name).size() == 2;
      },
      kWait));
  CHECK((*cluster.Get(Services(), name + "-reidworker"))["spec"]["ports"][0]["port"] == 9378);
  CHECK((*cluster.Get(Services(), name + "-userworker"))["spec"]["ports"][0]["port"] == 9379);
  CHECK((*cluster.Get(Deployments(), name + "-deployment-reidworker"))["spec"]["replicas"] == 2);
  for (const auto& [pod, p] : cluster.PodsOf(label, name)) {
    auto env = Env(p["spec"]);
    CHECK(env.at("USERWORKER_URL") == name + "-userworker.default:9379");
    CHECK(env.at("EDGEMESH_URL") == name + "-reidworker.default:9378");
  }
  REQUIRE(WaitFor(
      [&] {
        return cluster.edge().Holds("edge-0", "Worker/default/" + name + "-trackingworker-0") &&
               cluster.edge().Holds("edge-1", "Worker/default/" + name + "-trackingworker-1");
      },
      kWait));
  REQUIRE(cluster.WaitPhase("objs", name, "Pending"));

  cluster.DeploymentAvailable(name + "-deployment-reidworker", true);
  cluster.DeploymentAvailable(name + "-deployment-userworker", true);
  for (const auto& [pod, p] : cluster.PodsOf(label, name)) {
    cluster.PatchStatus(Pods(), pod, {{"phase", "Running"}});
  }
  REQUIRE(cluster.WaitPhase("objs", name, "Running"));

  // A tracking pod deleted (node drained, ...) is replaced; the service goes back to Running.
  const std::string victim = cluster.PodsOf(label, name).begin()->first;
  cluster.Ok({"delete", "pod", victim});
  REQUIRE(WaitFor(
      [&] {
        auto pods = cluster.PodsOf(label, name);
        return pods.size() == 2 && pods.count(victim) == 0;
      },
      kWait));
  for (const auto& [pod, p] : cluster.PodsOf(label, name)) {
    cluster.PatchStatus(Pods(), pod, {{"phase", "Running"}});
  }
  REQUIRE(cluster.WaitPhase("objs", name, "Running"));

  cluster.Ok({"delete", "objs", name});
  REQUIRE(WaitFor(
      [&] {
        return cluster.Gone(Deployments(), name + "-deployment-reidworker") &&
               cluster.Gone(Services(), name + "-userworker") &&
               cluster.PodsOf(label, name).empty();
      },
      kWait));
}

TEST_CASE("ObjectTrackingService end to end on devapiserver with kubectl") {
  Cluster cluster;
  const std::string name = "pedestrian-tracking";
  const std::string label = "objecttrackingservice.sedna.io/name";
  cluster.Ok({"apply", "-f", kSourceDir + "/examples/object-tracking-service.yaml"});
  REQUIRE(WaitFor(
      [&] {
        return cluster.Exists(Deployments(), name + "-deployment-reidworker") &&
               cluster.Exists(Services(), name + "-reidworker") &&
               cluster.PodsOf(label, name).size() == 1;
      },
      kWait));
  REQUIRE(cluster.WaitPhase("objt", name, "Pending"));
  cluster.DeploymentAvailable(name + "-deployment-reidworker", true);
  cluster.PatchStatus(Pods(), cluster.PodsOf(label, name).begin()->first, {{"phase", "Running"}});
  REQUIRE(cluster.WaitPhase("objt", name, "Running"));
  CHECK(cluster.Ok({"get", "objt", name, "-o", "jsonpath={.status.active}"}) == "2");

  // A spec change replaces the tracking pod.
  const std::string old_pod = cluster.PodsOf(label, name).begin()->first;
  cluster.Ok({"patch", "objt", name, "--type", "json", "-p",
              R"([{"op":"replace","path":"/spec/trackingWorkers/0/template/spec/containers/0/image",)"
              R"("value":"kubeedge/sedna-example-multi-edge-inference-objects-search-tracking:v0.6.0"}])"});
  REQUIRE(WaitFor(
      [&] {
        auto pods = cluster.PodsOf(label, name);
        return pods.size() == 1 && pods.count(old_pod) == 0;
      },
      kWait));
  cluster.Ok({"delete", "objt", name});
  REQUIRE(WaitFor([&] { return cluster.Gone(Deployments(), name + "-deployment-reidworker"); },
                  kWait));
}

}  // namespace
}  // namespace nereid::gm
