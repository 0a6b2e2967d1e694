#pragma once

// ServiceFixture<Controller>: a multi-edge service controller (FeatureExtractionController,
// ObjectSearchController, ObjectTrackingController) on the fake API, started, with helpers that
// play the deployment controller and the kubelet (Deployment status, pod phases).

#include <catch2/catch.hpp>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/api/sedna_contract.h"
#include "common/kube/resource.h"
#include "tests/fakes/eventually.h"
#include "tests/globalmanager/controllers/controller_env.h"
#include "tests/globalmanager/controllers/fake_model_requirements.h"

namespace nereid::gm::testing {

inline kube::Json DeploymentCondition(const std::string& type, const std::string& status,
                                      const std::string& reason) {
  return {{"type", type}, {"status", status}, {"reason", reason}, {"message", "m"}};
}

inline kube::Json LabelledEdgeNode(const std::string& name, const std::string& zone) {
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata",
           {{"name", name},
            {"labels", {{"node-role.kubernetes.io/edge", ""}, {"zone", zone}}}}}};
}

// The env of a container of a Deployment's pod template or of a pod.
inline std::map<std::string, std::string> EnvOf(const kube::Json& object, size_t container = 0) {
  const kube::Json& spec = object.contains("kind") && object["kind"] == "Pod"
                               ? object["spec"]
                               : object["spec"]["template"]["spec"];
  std::map<std::string, std::string> env;
  for (const kube::Json& e : spec["containers"][container]["env"]) {
    env[e["name"]] = e.value("value", "");
  }
  return env;
}

template <typename Controller>
struct ServiceFixture {
  ControllerEnv env;
  FakeModelRequirements models;
  std::unique_ptr<Controller> controller;
  const kube::Resource& resource;

  ServiceFixture(const kube::Resource& kind_resource, const std::vector<kube::Json>& nodes = {},
                 const std::vector<kube::Json>& models_to_create = {})
      : resource(kind_resource) {
    env.context().models = &models;
    for (const kube::Json& m : models_to_create) env.Create(api::resources::Models(), m);
    for (const kube::Json& node : nodes) env.Create(kube::resources::Nodes(), node);
    controller = env.Run(Controller::Create(env.context()));
  }
  ~ServiceFixture() { env.StopInformersAndController(*controller); }

  bool Converges(const std::function<bool()>& cond) { return env.Converges(cond); }
  // Stops the controller's informers of `resources`; their caches keep what they hold. So they
  // stay behind the controller's own writes, as an informer that has not caught up yet.
  void FreezeCaches(const std::vector<const kube::Resource*>& resources) {
    for (kube::SharedInformer* informer : controller->informers()) {
      for (const kube::Resource* r : resources) {
        if (informer->resource().QualifiedName() == r->QualifiedName()) informer->Stop();
      }
    }
  }
  // Whether the controller's queue took at least `adds` keys and has none queued, waiting or in
  // hand (every pass those adds asked for has run).
  bool IdleAfter(int64_t adds) {
    const kube::WorkQueue::Metrics m = controller->runner().queue().GetMetrics();
    return m.adds >= adds && m.depth == 0 && m.waiting == 0 && m.processing == 0;
  }
  bool Exists(const kube::Resource& r, const std::string& name) {
    return env.client().Get(r, "default", name).ok();
  }
  kube::Json Get(const kube::Resource& r, const std::string& name) {
    return env.Get(r, "default", name);
  }
  kube::Json Status(const std::string& name) { return env.StatusOf(resource, name); }
  std::string Phase(const std::string& name) { return Status(name).value("phase", ""); }
  std::string LastReason(const std::string& name) {
    kube::Json conditions = Status(name).value("conditions", kube::Json::array());
    return conditions.empty() ? "" : conditions.back().value("reason", "");
  }
  std::string SpecValidReason(const std::string& name) {
    for (const kube::Json& c : Status(name).value("conditions", kube::Json::array())) {
      if (c["type"] == "SpecValid") return c.value("reason", "");
    }
    return "";
  }
  void SetDeploymentStatus(const std::string& name, int available, const kube::Json& conditions) {
    kube::Json d = Get(kube::resources::Deployments(), name);
    kube::Json status = {{"observedGeneration", kube::Generation(d)},
                         {"replicas", 1},
                         {"availableReplicas", available},
                         {"readyReplicas", available}};
    if (!conditions.is_null()) status["conditions"] = conditions;
    d["status"] = std::move(status);
    absl::StatusOr<kube::Json> updated = env.client().UpdateStatus(kube::resources::Deployments(), d);
    INFO(updated.status().ToString());
    REQUIRE(updated.ok());
  }
  void MakeAvailable(const std::string& name) {
    SetDeploymentStatus(
        name, 1,
        kube::Json::array({DeploymentCondition("Progressing", "True", "NewReplicaSetAvailable"),
                           DeploymentCondition("Available", "True", "MinimumReplicasAvailable")}));
  }
  void FailDeployment(const std::string& name) {
    SetDeploymentStatus(
        name, 0,
        kube::Json::array({DeploymentCondition("Available", "False", "MinimumReplicasUnavailable"),
                           DeploymentCondition("Progressing", "False",
                                               "ProgressDeadlineExceeded")}));
  }
  // The service's pods (not being deleted), by name.
  std::map<std::string, kube::Json> Pods() {
    std::map<std::string, kube::Json> pods;
    for (const kube::Json& p : env.client().Objects(kube::resources::Pods())) {
      if (!kube::IsBeingDeleted(p)) pods[kube::Name(p)] = p;
    }
    return pods;
  }
  // The pod of tracking slot `slot`, or null.
  kube::Json SlotPod(const std::string& slot) {
    for (const auto& [name, p] : Pods()) {
      if (kube::Label(p, "nereid.io/worker-slot") == slot) return p;
    }
    return nullptr;
  }
  void SetPodStatus(const std::string& name, const kube::Json& status) {
    kube::Json p = Get(kube::resources::Pods(), name);
    p["status"] = status;
    absl::StatusOr<kube::Json> updated = env.client().UpdateStatus(kube::resources::Pods(), p);
    INFO(updated.status().ToString());
    REQUIRE(updated.ok());
  }
};

}  // namespace nereid::gm::testing
