// ObjectSearchController on the fake API: Sedna's two Deployments, two Services and one tracking
// pod per entry (names, labels, ports, env), truthful status from Deployments and pod phases with
// recovery, tracking pods replaced when they end or the spec changes, an invalid spec.

#include "globalmanager/controllers/tracking_pipeline_controller.h"

#include <catch2/catch.hpp>

#include "common/api/sedna_contract.h"
#include "tests/globalmanager/controllers/multi_edge_fixture.h"

namespace nereid::gm {
namespace {

using kube::Json;
using testing::EnvOf;

const kube::Resource& Objs() { return api::resources::ObjectSearchServices(); }
const kube::Resource& Deployments() { return kube::resources::Deployments(); }
const kube::Resource& Services() { return kube::resources::Services(); }
const kube::Resource& Pods() { return kube::resources::Pods(); }

using Fixture = testing::ServiceFixture<ObjectSearchController>;

Json TrackingWorker(const std::string& node, const std::string& image = "tracking:1") {
  return {{"template",
           {{"spec",
             {{"nodeName", node},
              {"containers", Json::array({{{"name", "tracking"}, {"image", image}}})}}}}}};
}

Json ObjsObject() {
  Json objs = Json::parse(R"({
    "apiVersion": "sedna.io/v1alpha1", "kind": "ObjectSearchService",
    "metadata": {"name": "search", "namespace": "default"},
    "spec": {
      "userWorker": {"template": {"spec": {"containers": [{"name": "user", "image": "user:1"}]}}},
      "reidWorkers": {"replicas": 2, "selector": {"matchLabels": {"app": "reid"}},
                      "template": {"metadata": {"labels": {"app": "reid"}},
                                   "spec": {"containers": [{"name": "reid", "image": "reid:1"}]}}}
    }
  })");
  objs["spec"]["trackingWorkers"] = Json::array({TrackingWorker("edge-0"), TrackingWorker("edge-1")});
  return objs;
}

bool Children(Fixture& f) {
  return f.Exists(Deployments(), "search-deployment-reidworker") &&
         f.Exists(Deployments(), "search-deployment-userworker") &&
         f.Exists(Services(), "search-reidworker") && f.Exists(Services(), "search-userworker") &&
         f.Pods().size() == 2;
}

void RunPod(Fixture& f, const std::string& slot) {
  f.SetPodStatus(kube::Name(f.SlotPod(slot)), {{"phase", "Running"}});
}

TEST_CASE("objs: Sedna's Deployments, Services and tracking pods with their env and labels") {
  Fixture f(Objs());
  Json objs = f.env.Create(Objs(), ObjsObject());
  const std::string uid = kube::Uid(objs);
  REQUIRE(f.Converges([&] { return Children(f); }));

  Json reid = f.Get(Deployments(), "search-deployment-reidworker");
  Json user = f.Get(Deployments(), "search-deployment-userworker");
  CHECK(reid["spec"]["replicas"] == 2);
  CHECK(user["spec"]["replicas"] == 1);
  CHECK(kube::Label(reid, "objectsearchservice.sedna.io/worker-type") == "reidworker");
  CHECK(kube::Label(user, "objectsearchservice.sedna.io/worker-type") == "userworker");
  CHECK(user["spec"]["selector"]["matchLabels"]["app.sedna.io"] == "search-userworker-svc");
  CHECK(EnvOf(user).at("WORKER_NAME").rfind("userworker-", 0) == 0);
  CHECK(EnvOf(user).at("SERVICE_NAME") == "search");
  CHECK(EnvOf(user).at("JOB_NAME") == "search");
  CHECK(f.Get(Services(), "search-reidworker")["spec"]["ports"][0]["port"] == 9378);
  CHECK(f.Get(Services(), "search-userworker")["spec"]["ports"][0]["port"] == 9379);
  CHECK(f.Get(Services(), "search-userworker")["spec"]["ports"][0]["name"] == "tcp-0");

  for (const std::string slot : {"0", "1"}) {
    Json pod = f.SlotPod(slot);
    REQUIRE(pod.is_object());
    CHECK(kube::StringAt(pod, "metadata.generateName") == "search-trackingworker-");
    CHECK(kube::Label(pod, "objectsearchservice.sedna.io/worker-type") == "trackingworker");
    CHECK(kube::Label(pod, "objectsearchservice.sedna.io/uid") == uid);
    CHECK(kube::ControllerOf(pod)->uid == uid);
    CHECK(pod["spec"]["nodeName"] == (slot == "0" ? "edge-0" : "edge-1"));
    auto env = EnvOf(pod);
    CHECK(env.at("USERWORKER_URL") == "search-userworker.default:9379");
    CHECK(env.at("EDGEMESH_URL") == "search-reidworker.default:9378");
    CHECK(env.at("WORKER_NAME").rfind("trackingworker-", 0) == 0);
    CHECK(env.at("NAMESPACE") == "default");
  }
  CHECK(EnvOf(f.SlotPod("0")).at("WORKER_NAME") != EnvOf(f.SlotPod("1")).at("WORKER_NAME"));

  // The pinned tracking workers are announced to their nodes.
  REQUIRE(f.Converges([&] {
    return f.controller->EdgeNodes("default/search") ==
           std::vector<std::string>{"edge-0", "edge-1"};
  }));
  edge::v1::Resource r =
      *f.env.edge().Get("edge-1", "Worker/default/search-trackingworker-1");
  CHECK(r.worker().job_kind() == "ObjectSearchService");
  CHECK(r.worker().worker_type() == "trackingworker");
}

TEST_CASE("objs: status follows Deployments and pod phases; an ended pod is replaced; recovery") {
  Fixture f(Objs());
  f.env.Create(Objs(), ObjsObject());
  REQUIRE(f.Converges([&] { return Children(f); }));
  REQUIRE(f.Converges([&] { return f.Phase("search") == "Pending"; }));

  f.MakeAvailable("search-deployment-reidworker");
  f.MakeAvailable("search-deployment-userworker");
  RunPod(f, "0");
  RunPod(f, "1");
  REQUIRE(f.Converges([&] { return f.Phase("search") == "Running"; }));
  CHECK(f.Status("search")["active"] == 4);

  // A tracking container that cannot start is a failure, not "Pending forever".
  const std::string pod0 = kube::Name(f.SlotPod("0"));
  f.SetPodStatus(pod0, Json::parse(R"({"phase": "Pending", "containerStatuses": [
      {"name": "tracking", "state": {"waiting": {"reason": "ImagePullBackOff",
                                                 "message": "no such image"}}}]})"));
  REQUIRE(f.Converges([&] { return f.Phase("search") == "Failed"; }));
  CHECK(f.Status("search")["failed"] == 1);
  CHECK(f.Status("search")["conditions"].back()["message"].get<std::string>().find(
            "ImagePullBackOff") != std::string::npos);
  RunPod(f, "0");
  REQUIRE(f.Converges([&] { return f.Phase("search") == "Running"; }));
  CHECK(f.env.Events("search", "Recovered").size() == 1);

  // A pod that Failed is replaced by a new one (Sedna marks the service Failed for good).
  f.SetPodStatus(pod0, {{"phase", "Failed"}, {"reason", "Evicted"}});
  REQUIRE(f.Converges([&] {
    Json p = f.SlotPod("0");
    return p.is_object() && kube::Name(p) != pod0;
  }));
  CHECK(f.Pods().size() == 2);
  CHECK(f.Phase("search") != "Running");
  RunPod(f, "0");
  REQUIRE(f.Converges([&] { return f.Phase("search") == "Running"; }));
}

TEST_CASE("objs: spec changes replace tracking pods, drop removed ones and update Deployments") {
  Fixture f(Objs());
  f.env.Create(Objs(), ObjsObject());
  REQUIRE(f.Converges([&] { return Children(f); }));
  const std::string pod1 = kube::Name(f.SlotPod("1"));

  Json spec = ObjsObject()["spec"];
  spec["trackingWorkers"] = Json::array({TrackingWorker("edge-1", "tracking:2")});
  spec["reidWorkers"]["replicas"] = 4;
  f.env.Patch(Objs(), "default", "search", {{"spec", spec}});
  REQUIRE(f.Converges([&] {
    auto pods = f.Pods();
    if (pods.size() != 1 || pods.count(pod1) > 0) return false;
    const Json& p = pods.begin()->second;
    return p["spec"]["containers"][0]["image"] == "tracking:2" &&
           kube::Label(p, "nereid.io/worker-slot") == "0";
  }));
  REQUIRE(f.Converges([&] {
    return f.Get(Deployments(), "search-deployment-reidworker")["spec"]["replicas"] == 4;
  }));
  REQUIRE(f.Converges([&] {
    return f.controller->EdgeNodes("default/search") == std::vector<std::string>{"edge-1"};
  }));
  CHECK_FALSE(f.env.edge().Holds("edge-0", "Worker/default/search-trackingworker-0"));
  CHECK(f.env.Events("search", "SuccessfulDelete").size() >= 1);
}

TEST_CASE("objs: an invalid spec creates nothing and names every problem") {
  Fixture f(Objs());
  Json objs = ObjsObject();
  objs["spec"]["trackingWorkers"] = Json::array();
  objs["spec"].erase("userWorker");
  f.env.Create(Objs(), objs);
  REQUIRE(f.Converges([&] { return f.SpecValidReason("search") == "InvalidSpec"; }));
  CHECK(f.Phase("search") == "Failed");
  const std::string message = f.Status("search")["conditions"][0]["message"];
  CHECK(message.find("spec.trackingWorkers") != std::string::npos);
  CHECK(message.find("spec.userWorker.template") != std::string::npos);
  CHECK(f.env.client().Objects(Deployments()).empty());
  CHECK(f.env.client().Objects(Pods()).empty());
  REQUIRE(f.Converges([&] { return f.env.Events("search", "InvalidSpec").size() == 1; }));
}

}  // namespace
}  // namespace nereid::gm
