// ObjectTrackingController on the fake API (Sedna has no controller for the kind): the reid
// Deployment + Service and one tracking pod per entry, placement by nodeSelector, status.

#include "globalmanager/controllers/tracking_pipeline_controller.h"

#include <catch2/catch.hpp>

#include "common/api/sedna_contract.h"
#include "tests/globalmanager/controllers/multi_edge_fixture.h"

namespace nereid::gm {
namespace {

using kube::Json;
using testing::EnvOf;
using testing::LabelledEdgeNode;

const kube::Resource& Objt() { return api::resources::ObjectTrackingServices(); }
const kube::Resource& Deployments() { return kube::resources::Deployments(); }
const kube::Resource& Services() { return kube::resources::Services(); }

using Fixture = testing::ServiceFixture<ObjectTrackingController>;

Json ObjtObject() {
  return Json::parse(R"({
    "apiVersion": "sedna.io/v1alpha1", "kind": "ObjectTrackingService",
    "metadata": {"name": "track", "namespace": "default"},
    "spec": {
      "trackingWorkers": [
        {"template": {"spec": {"nodeSelector": {"zone": "a"},
                               "containers": [{"name": "tracking", "image": "tracking:1"}]}}}],
      "reidWorkers": {"template": {"spec": {"containers": [{"name": "reid", "image": "reid:1"}]}}}
    }
  })");
}

TEST_CASE("objt: reid Deployment + Service and tracking pods; placed by nodeSelector; Running") {
  Fixture f(Objt(), {LabelledEdgeNode("edge-a1", "a"), LabelledEdgeNode("edge-a2", "a"),
                     LabelledEdgeNode("edge-b1", "b")});
  Json objt = f.env.Create(Objt(), ObjtObject());
  REQUIRE(f.Converges([&] {
    return f.Exists(Deployments(), "track-deployment-reidworker") &&
           f.Exists(Services(), "track-reidworker") && f.Pods().size() == 1;
  }));
  Json reid = f.Get(Deployments(), "track-deployment-reidworker");
  CHECK(reid["spec"]["replicas"] == 1);  // reidWorkers.replicas absent.
  CHECK(kube::ControllerOf(reid)->kind == "ObjectTrackingService");
  CHECK(kube::Label(reid, "objecttrackingservice.sedna.io/worker-type") == "reidworker");
  CHECK(f.Get(Services(), "track-reidworker")["spec"]["ports"][0]["port"] == 9378);
  Json pod = f.SlotPod("0");
  CHECK(kube::StringAt(pod, "metadata.generateName") == "track-trackingworker-");
  auto env = EnvOf(pod);
  CHECK(env.at("EDGEMESH_URL") == "track-reidworker.default:9378");
  CHECK(env.count("USERWORKER_URL") == 0);
  CHECK(env.at("SERVICE_NAME") == "track");
  CHECK(env.at("JOB_NAME") == "track");

  // The tracking worker selects zone a: both of its edge nodes are told, edge-b1 is not.
  REQUIRE(f.Converges([&] {
    return f.controller->EdgeNodes("default/track") ==
           std::vector<std::string>{"edge-a1", "edge-a2"};
  }));

  f.MakeAvailable("track-deployment-reidworker");
  f.SetPodStatus(kube::Name(pod), {{"phase", "Running"}});
  REQUIRE(f.Converges([&] { return f.Phase("track") == "Running"; }));
  CHECK(f.Status("track")["active"] == 2);
  CHECK(f.Status("track")["failed"] == 0);
  CHECK(f.env.Events("track", "Running").size() == 1);

  f.FailDeployment("track-deployment-reidworker");
  REQUIRE(f.Converges([&] { return f.Phase("track") == "Failed"; }));
  f.MakeAvailable("track-deployment-reidworker");
  REQUIRE(f.Converges([&] { return f.Phase("track") == "Running"; }));

  f.env.Delete(Objt(), "default", "track");
  REQUIRE(f.Converges([&] { return f.controller->EdgeNodes("default/track").empty(); }));
}

TEST_CASE("objt: a pod the cache does not show yet is neither created again nor read live") {
  // Pods have generated names, so a second create would not collide: the pass our status write
  // triggers must count the pod it created in its slot.
  Fixture f(Objt(), {LabelledEdgeNode("edge-a1", "a")});
  f.FreezeCaches({&Deployments(), &Services(), &kube::resources::Pods()});
  f.env.client().ClearActions();
  f.env.Create(Objt(), ObjtObject());
  REQUIRE(f.Converges([&] { return f.IdleAfter(2); }));  // Creation and our status write.
  CHECK(f.Pods().size() == 1);
  const std::string pods = kube::resources::Pods().QualifiedName();
  CHECK(f.env.client().CountActions(fakes::Verb::kCreate, pods) == 1);
  CHECK(f.env.client().CountActions(fakes::Verb::kGet, pods) == 0);
  CHECK(f.env.client().CountActions(fakes::Verb::kUpdateStatus, Objt().QualifiedName()) == 1);
  CHECK(f.env.client().CountActions(fakes::Verb::kGet, Objt().QualifiedName()) == 0);
  CHECK(f.Status("track").dump().find("not created yet") == std::string::npos);
}

TEST_CASE("objt: a malformed node selection is an invalid spec") {
  Fixture f(Objt());
  Json objt = ObjtObject();
  objt["spec"]["trackingWorkers"][0]["template"]["spec"]["affinity"] = Json::parse(R"({
      "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "Near", "values": ["a"]}]}]}}})");
  f.env.Create(Objt(), objt);
  REQUIRE(f.Converges([&] { return f.SpecValidReason("track") == "InvalidSpec"; }));
  CHECK(f.Status("track")["conditions"][0]["message"].get<std::string>().find(
            "spec.trackingWorkers[0].template.spec") != std::string::npos);
  CHECK(f.env.client().Objects(Deployments()).empty());
}

}  // namespace
}  // namespace nereid::gm
