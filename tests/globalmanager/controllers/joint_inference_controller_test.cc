// JointInferenceController on the fake API: children, rollouts, HPAs, self-healing, status phases
// (no Failed on a transient rollout, recovery), invalid specs, edge dispatch and placement, and
// worker reports → status.metrics.

#include "globalmanager/controllers/joint_inference_controller.h"

#include <catch2/catch.hpp>
#include <functional>
#include <map>
#include <memory>

#include "common/api/sedna_contract.h"
#include "globalmanager/controllers/model_requirements.h"
#include "globalmanager/controllers/s3_credentials.h"
#include "globalmanager/controllers/spec_validity.h"
#include "globalmanager/controllers/status_conditions.h"
#include "tests/fakes/eventually.h"
#include "tests/globalmanager/controllers/controller_env.h"
#include "tests/globalmanager/controllers/fake_model_requirements.h"

namespace nereid::gm {
namespace {

using fakes::Eventually;
using fakes::Verb;
using kube::Json;
using testing::ControllerEnv;
using testing::ModelObject;
using testing::ReportThroughHub;

const kube::Resource& Jis() { return api::resources::JointInferenceServices(); }
const kube::Resource& Deployments() { return kube::resources::Deployments(); }
const kube::Resource& Services() { return kube::resources::Services(); }
const kube::Resource& Hpas() { return kube::resources::HorizontalPodAutoscalers(); }
constexpr char kRef[] = "JointInferenceService/default/ji";
constexpr char kRequester[] = "JointInferenceService/default/ji";

Json JiObject(const std::string& name = "ji") {
  Json ji = Json::parse(R"({
    "apiVersion": "sedna.io/v1alpha1", "kind": "JointInferenceService",
    "metadata": {"namespace": "default"},
    "spec": {
      "edgeWorker": {
        "model": {"name": "little"},
        "hardExampleMining": {"name": "IBT",
                              "parameters": [{"key": "threshold_img", "value": "0.9"}]},
        "template": {"metadata": {"labels": {"app": "helmet"}},
                     "spec": {"nodeName": "edge-0",
                              "containers": [{"name": "little", "image": "little:1",
                                              "env": [{"name": "input_shape", "value": "416"}]}]}}
      },
      "cloudWorker": {
        "model": {"name": "big"},
        "template": {"spec": {"containers": [{"name": "big", "image": "big:1",
                                              "ports": [{"containerPort": 5000}]}]}}
      }
    }
  })");
  ji["metadata"]["name"] = name;
  return ji;
}

Json EdgeNode(const std::string& name, const std::string& zone) {
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata",
           {{"name", name},
            {"labels", {{"node-role.kubernetes.io/edge", ""}, {"zone", zone}}}}}};
}

std::map<std::string, std::string> EnvOf(const Json& deployment, size_t container = 0) {
  std::map<std::string, std::string> env;
  for (const Json& e : deployment["spec"]["template"]["spec"]["containers"][container]["env"]) {
    env[e["name"]] = e.value("value", "");
  }
  return env;
}

struct Fixture {
  ControllerEnv env;
  FakeModelRequirements models;
  std::unique_ptr<JointInferenceController> controller;

  explicit Fixture(const std::vector<Json>& services = {}, const std::vector<Json>& nodes = {}) {
    env.context().models = &models;
    env.Create(api::resources::Models(), ModelObject("little", "/models/little/l.pb"));
    env.Create(api::resources::Models(), ModelObject("big", "https://models.example/big.pb"));
    for (const Json& node : nodes) env.Create(kube::resources::Nodes(), node);
    for (const Json& ji : services) env.Create(Jis(), ji);
    controller = env.Run(JointInferenceController::Create(env.context()));
  }
  ~Fixture() { env.StopInformersAndController(*controller); }

  bool Converges(const std::function<bool()>& cond) { return env.Converges(cond); }
  bool Exists(const kube::Resource& resource, const std::string& name) {
    return env.client().Get(resource, "default", name).ok();
  }
  Json Get(const kube::Resource& resource, const std::string& name) {
    return env.Get(resource, "default", name);
  }
  Json Status(const std::string& name = "ji") { return env.StatusOf(Jis(), name); }
  std::string Phase(const std::string& name = "ji") { return Status(name).value("phase", ""); }
  // Sets a Deployment's status as the deployment controller would.
  void SetDeploymentStatus(const std::string& name, int available, const Json& conditions) {
    Json d = Get(Deployments(), name);
    d["status"] = {{"observedGeneration", kube::Generation(d)},
                   {"replicas", 1},
                   {"availableReplicas", available},
                   {"readyReplicas", available}};
    if (!conditions.is_null()) d["status"]["conditions"] = conditions;
    absl::StatusOr<Json> updated = env.client().UpdateStatus(Deployments(), d);
    INFO(updated.status().ToString());
    REQUIRE(updated.ok());
  }
  void MakeAvailable(const std::string& name) {
    SetDeploymentStatus(name, 1,
                        Json::array({{{"type", "Progressing"},
                                      {"status", "True"},
                                      {"reason", "NewReplicaSetAvailable"}},
                                     {{"type", "Available"},
                                      {"status", "True"},
                                      {"reason", "MinimumReplicasAvailable"}}}));
  }
  bool Children() {
    return Exists(Deployments(), "ji-deployment-cloud") &&
           Exists(Deployments(), "ji-deployment-edge") && Exists(Services(), "ji-cloud");
  }
};

Json Cond(const std::string& type, const std::string& status, const std::string& reason) {
  return {{"type", type}, {"status", status}, {"reason", reason}, {"message", "m"}};
}

TEST_CASE("JI: children carry Sedna's labels, env, owner, ports and replicas; the edge gets the spec") {
  Fixture f;
  Json ji = f.env.Create(Jis(), JiObject());
  const std::string uid = kube::Uid(ji);
  REQUIRE(f.Converges([&] { return f.Children(); }));

  Json cloud = f.Get(Deployments(), "ji-deployment-cloud");
  Json edge = f.Get(Deployments(), "ji-deployment-edge");
  Json svc = f.Get(Services(), "ji-cloud");
  for (const Json* child : {&cloud, &edge, &svc}) {
    auto owner = kube::ControllerOf(*child);
    REQUIRE(owner.has_value());
    CHECK(owner->uid == uid);
    CHECK(owner->kind == "JointInferenceService");
    CHECK(kube::Label(*child, "jointinferenceservice.sedna.io/name") == "ji");
    CHECK(kube::Label(*child, "jointinferenceservice.sedna.io/uid") == uid);
  }
  CHECK(kube::Label(cloud, "jointinferenceservice.sedna.io/worker-type") == "cloud");
  CHECK(cloud["spec"]["replicas"] == 1);
  CHECK(cloud["spec"]["selector"]["matchLabels"]["app.sedna.io"] == "ji-cloud-svc");
  CHECK(cloud["spec"]["template"]["metadata"]["labels"]["jointinferenceservice.sedna.io/uid"] ==
        uid);
  auto cloud_env = EnvOf(cloud);
  CHECK(cloud_env.at("BIG_MODEL_BIND_PORT") == "5000");
  CHECK(cloud_env.at("MODEL_URL") == "https://models.example/big.pb");
  CHECK(cloud_env.at("SERVICE_NAME") == "ji");
  CHECK(cloud_env.at("NAMESPACE") == "default");
  CHECK(cloud["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"] == 5000);

  auto edge_env = EnvOf(edge);
  CHECK(edge_env.at("BIG_MODEL_IP") == "ji-cloud.default");
  CHECK(edge_env.at("BIG_MODEL_PORT") == "5000");
  CHECK(edge_env.at("HEM_NAME") == "IBT");
  CHECK(edge_env.at("HEM_PARAMETERS") == R"([{"key":"threshold_img","value":"0.9"}])");
  CHECK(edge_env.at("LC_SERVER") == "http://localhost:9100");
  CHECK(edge_env.at("MODEL_URL") == "/home/data/models/little/l.pb");
  CHECK(edge_env.at("input_shape") == "416");  // the user's env is kept
  CHECK(edge_env.at("WORKER_NAME").rfind("edgeworker-", 0) == 0);
  CHECK(edge["spec"]["template"]["metadata"]["labels"]["app"] == "helmet");
  CHECK(edge["spec"]["template"]["spec"]["nodeName"] == "edge-0");
  CHECK(edge["spec"]["template"]["spec"]["hostNetwork"] == true);  // LC_SERVER is localhost
  CHECK(edge["spec"]["template"]["spec"]["dnsPolicy"] == "ClusterFirstWithHostNet");
  CHECK_FALSE(cloud["spec"]["template"]["spec"].contains("hostNetwork"));

  CHECK(svc["spec"]["ports"][0]["name"] == "tcp-0");
  CHECK(svc["spec"]["ports"][0]["port"] == 5000);
  CHECK(svc["spec"]["selector"]["jointinferenceservice.sedna.io/worker-type"] == "cloud");

  // Edge dispatch: a typed spec versioned by generation; the edge model required on edge-0.
  REQUIRE(f.Converges([&] { return f.env.edge().Holds("edge-0", kRef); }));
  edge::v1::Resource r = *f.env.edge().Get("edge-0", kRef);
  CHECK(r.ref().uid() == uid);
  CHECK(r.version() == "1");
  CHECK(r.joint_inference_service().edge_worker().model_name() == "little");
  CHECK(r.joint_inference_service().edge_worker().node_name() == "edge-0");
  CHECK(r.joint_inference_service().edge_worker().hard_example_mining().name() == "IBT");
  CHECK(r.joint_inference_service().edge_worker().hard_example_mining().parameters(0).value() ==
        "0.9");
  CHECK(r.joint_inference_service().cloud_worker().model_name() == "big");
  CHECK(f.controller->EdgeNodes("default/ji") == std::vector<std::string>{"edge-0"});
  REQUIRE(f.Converges([&] {
    return f.models.Needs(kRequester) == std::vector<ModelNeed>{{"default/little", "edge-0"}};
  }));

  // Status: Pending until the workers are available; Events for the children.
  REQUIRE(f.Converges([&] { return f.Phase() == "Pending"; }));
  Json status = f.Status();
  CHECK(status["active"] == 0);
  CHECK(status["failed"] == 0);
  CHECK(status.contains("startTime"));
  CHECK(status["observedGeneration"] == 1);
  CHECK(status["conditions"].back()["type"] == "Pending");
  CHECK(f.env.Events("ji", "SuccessfulCreate").size() >= 1);
}

TEST_CASE("JI: a user's env value is never overwritten") {
  Fixture f;
  Json ji = JiObject();
  ji["spec"]["edgeWorker"]["template"]["spec"]["containers"][0]["env"] = Json::array(
      {{{"name", "LC_SERVER"}, {"value", "http://127.0.0.1:19100"}},
       {{"name", "BIG_MODEL_IP"}, {"value", "big.example"}},
       {{"name", "MODEL_URL"}, {"value", "/mine.pb"}}});
  f.env.Create(Jis(), ji);
  REQUIRE(f.Converges([&] { return f.Children(); }));
  auto env = EnvOf(f.Get(Deployments(), "ji-deployment-edge"));
  CHECK(env.at("LC_SERVER") == "http://127.0.0.1:19100");
  CHECK(env.at("BIG_MODEL_IP") == "big.example");
  CHECK(env.at("MODEL_URL") == "/mine.pb");
  CHECK(env.at("BIG_MODEL_PORT") == "5000");
  int lc_server = 0;
  const Json edge = f.Get(Deployments(), "ji-deployment-edge");
  for (const Json& e : edge["spec"]["template"]["spec"]["containers"][0]["env"]) {
    lc_server += e["name"] == "LC_SERVER" ? 1 : 0;
  }
  CHECK(lc_server == 1);
}

TEST_CASE("JI: Running when both workers are available; no Failed on a transient rollout; recovery") {
  Fixture f;
  f.env.Create(Jis(), JiObject());
  REQUIRE(f.Converges([&] { return f.Children(); }));
  f.MakeAvailable("ji-deployment-cloud");
  REQUIRE(f.Converges([&] { return f.Status().value("active", 0) == 1; }));
  CHECK(f.Phase() == "Pending");
  f.MakeAvailable("ji-deployment-edge");
  REQUIRE(f.Converges([&] { return f.Phase() == "Running"; }));
  CHECK(f.Status()["active"] == 2);
  CHECK(f.Status()["conditions"].back()["type"] == "Running");
  CHECK(f.Status()["conditions"].back()["reason"] == "WorkersAvailable");
  CHECK(f.env.Events("ji", "Running").size() == 1);

  // A rollout: the new ReplicaSet is progressing, no replica available for a moment; the
  // Deployment's last condition is not "Progressing" either. Sedna marked this Failed for good.
  f.SetDeploymentStatus("ji-deployment-edge", 0,
                        Json::array({Cond("Available", "False", "MinimumReplicasUnavailable"),
                                     Cond("Progressing", "True", "ReplicaSetUpdated")}));
  REQUIRE(f.Converges([&] { return f.Phase() == "Pending"; }));
  CHECK(f.Status()["failed"] == 0);
  CHECK(f.Status()["conditions"].back()["message"].get<std::string>().find(
            "MinimumReplicasUnavailable") != std::string::npos);

  // A real failure: the rollout exceeded its progress deadline with nothing available.
  f.SetDeploymentStatus("ji-deployment-edge", 0,
                        Json::array({Cond("Available", "False", "MinimumReplicasUnavailable"),
                                     Cond("Progressing", "False", "ProgressDeadlineExceeded")}));
  REQUIRE(f.Converges([&] { return f.Phase() == "Failed"; }));
  CHECK(f.Status()["failed"] == 1);
  CHECK(f.Status()["active"] == 1);
  CHECK(f.Status()["conditions"].back()["reason"] == "WorkerFailed");
  CHECK(f.env.Events("ji", "WorkerFailed").size() == 1);

  // Healthy again: Failed is not terminal for a service.
  f.MakeAvailable("ji-deployment-edge");
  REQUIRE(f.Converges([&] { return f.Phase() == "Running"; }));
  CHECK(f.Status()["failed"] == 0);
  CHECK(f.env.Events("ji", "Recovered").size() == 1);

  // The history stays bounded however often it flips.
  for (int i = 0; i < 6; ++i) {
    f.SetDeploymentStatus("ji-deployment-cloud", 0,
                          Json::array({Cond("Progressing", "False", "ProgressDeadlineExceeded")}));
    REQUIRE(f.Converges([&] { return f.Phase() == "Failed"; }));
    f.MakeAvailable("ji-deployment-cloud");
    REQUIRE(f.Converges([&] { return f.Phase() == "Running"; }));
  }
  CHECK(f.Status()["conditions"].size() <= api::kMaxConditions);
}

TEST_CASE("JI: a spec change rolls the Deployment template; replicas follow the spec") {
  Fixture f;
  f.env.Create(Jis(), JiObject());
  REQUIRE(f.Converges([&] { return f.Children(); }));
  const std::string old_hash =
      *kube::Annotation(f.Get(Deployments(), "ji-deployment-edge"), kTemplateHashAnnotation);

  Json edge_template = JiObject()["spec"]["edgeWorker"]["template"];
  edge_template["spec"]["containers"][0]["image"] = "little:2";
  f.env.Patch(Jis(), "default", "ji",
              {{"spec", {{"edgeWorker", {{"template", edge_template}, {"replicas", 3}}}}}});
  REQUIRE(f.Converges([&] {
    Json d = f.Get(Deployments(), "ji-deployment-edge");
    return d["spec"]["template"]["spec"]["containers"][0]["image"] == "little:2" &&
           d["spec"]["replicas"] == 3;
  }));
  Json edge = f.Get(Deployments(), "ji-deployment-edge");
  CHECK(*kube::Annotation(edge, kTemplateHashAnnotation) != old_hash);
  CHECK(EnvOf(edge).at("BIG_MODEL_IP") == "ji-cloud.default");  // still fully built
  CHECK(f.Get(Deployments(), "ji-deployment-cloud")["spec"]["template"]["spec"]["containers"][0]
                                                                        ["image"] == "big:1");
  CHECK(f.env.Events("ji", "SuccessfulUpdate").size() >= 1);
  // The spec is re-sent to the edge with the new generation.
  REQUIRE(f.Converges([&] { return f.env.edge().Get("edge-0", kRef)->version() == "2"; }));

  // Someone scales the Deployment by hand: the spec wins (there is no HPA).
  Json scaled = f.Get(Deployments(), "ji-deployment-edge");
  scaled["spec"]["replicas"] = 7;
  REQUIRE(f.env.client().Update(Deployments(), scaled).ok());
  REQUIRE(f.Converges(
      [&] { return f.Get(Deployments(), "ji-deployment-edge")["spec"]["replicas"] == 3; }));
}

TEST_CASE("JI: the HPA is created, updated and deleted with the spec") {
  Fixture f;
  f.env.Create(Jis(), JiObject());
  REQUIRE(f.Converges([&] { return f.Children(); }));
  CHECK_FALSE(f.Exists(Hpas(), "hpa-ji-deployment-edge"));

  f.env.Patch(Jis(), "default", "ji",
              {{"spec", {{"edgeWorker", {{"hpa", {{"minReplicas", 1}, {"maxReplicas", 3}}}}}}}});
  REQUIRE(f.Converges([&] { return f.Exists(Hpas(), "hpa-ji-deployment-edge"); }));
  Json hpa = f.Get(Hpas(), "hpa-ji-deployment-edge");
  CHECK(hpa["spec"]["scaleTargetRef"]["kind"] == "Deployment");
  CHECK(hpa["spec"]["scaleTargetRef"]["name"] == "ji-deployment-edge");
  CHECK(hpa["spec"]["maxReplicas"] == 3);
  CHECK(kube::ControllerOf(hpa)->kind == "JointInferenceService");
  CHECK_FALSE(f.Exists(Hpas(), "hpa-ji-deployment-cloud"));

  // With an HPA, the Deployment's replicas are the HPA's business.
  Json scaled = f.Get(Deployments(), "ji-deployment-edge");
  scaled["spec"]["replicas"] = 2;
  REQUIRE(f.env.client().Update(Deployments(), scaled).ok());

  f.env.Patch(Jis(), "default", "ji",
              {{"spec", {{"edgeWorker", {{"hpa", {{"minReplicas", 2}, {"maxReplicas", 5}}}}}}}});
  REQUIRE(f.Converges(
      [&] { return f.Get(Hpas(), "hpa-ji-deployment-edge")["spec"]["maxReplicas"] == 5; }));
  CHECK(f.Get(Hpas(), "hpa-ji-deployment-edge")["spec"]["minReplicas"] == 2);
  CHECK(f.Get(Deployments(), "ji-deployment-edge")["spec"]["replicas"] == 2);

  f.env.Patch(Jis(), "default", "ji", {{"spec", {{"edgeWorker", {{"hpa", nullptr}}}}}});
  REQUIRE(f.Converges([&] { return !f.Exists(Hpas(), "hpa-ji-deployment-edge"); }));
  CHECK(f.env.Events("ji", "SuccessfulDelete").size() >= 1);
  // Back to the spec's replicas (default 1).
  REQUIRE(f.Converges(
      [&] { return f.Get(Deployments(), "ji-deployment-edge")["spec"]["replicas"] == 1; }));
}

TEST_CASE("JI: a child deleted while the service lives is recreated") {
  Fixture f;
  f.env.Create(Jis(), JiObject());
  REQUIRE(f.Converges([&] { return f.Children(); }));
  const std::string old_uid = kube::Uid(f.Get(Deployments(), "ji-deployment-cloud"));
  f.env.Delete(Deployments(), "default", "ji-deployment-cloud");
  f.env.Delete(Services(), "default", "ji-cloud");
  REQUIRE(f.Converges([&] {
    auto d = f.env.client().Get(Deployments(), "default", "ji-deployment-cloud");
    return d.ok() && kube::Uid(*d) != old_uid && f.Exists(Services(), "ji-cloud");
  }));
  // Exactly one of each: no duplicates from a lagging cache.
  CHECK(f.env.client().Objects(Deployments()).size() == 2);
  CHECK(f.env.client().Objects(Services()).size() == 1);
}

TEST_CASE("JI: no child is re-created for a service the API server no longer has") {
  // The cache still shows the service, the API server says it is gone (its deletion is racing
  // the garbage collector's deletions of its children): nothing is re-created. The first creation
  // needs no such read (no child can have been collected before it exists).
  Fixture f;
  f.env.Create(Jis(), JiObject());
  REQUIRE(f.Converges([&] { return f.Children() && f.Phase() == "Pending"; }));
  // Settled: the controller's cache has its own status write (a pass from an older copy would
  // conflict and read the service live, taking the NotFound meant for the guard below).
  auto cached_phase = [&] {
    for (kube::SharedInformer* informer : f.controller->informers()) {
      if (informer->resource().QualifiedName() != Jis().QualifiedName()) continue;
      absl::StatusOr<kube::ObjectPtr> ji = informer->GetLister().Get("default", "ji");
      return ji.ok() ? kube::StringAt(**ji, "status.phase") : std::string();
    }
    return std::string();
  };
  REQUIRE(f.Converges([&] {
    return cached_phase() == "Pending" && f.controller->runner().queue().Len() == 0;
  }));
  f.env.client().ClearActions();
  f.env.client().FailNext(Verb::kGet, 1, kube::NotFoundError(Jis().QualifiedName(), "ji"),
                          Jis().QualifiedName());
  f.env.Delete(Deployments(), "default", "ji-deployment-cloud");
  REQUIRE(f.Converges([&] {
    return f.env.client().CountActions(Verb::kGet, Jis().QualifiedName()) >= 1 &&
           f.controller->runner().queue().Len() == 0;
  }));
  // The pass that was told "gone" created nothing: any create (a later pass may make one — the
  // service is alive after all) follows a second, successful live read.
  int reads = 0;
  for (const fakes::Action& action : f.env.client().Actions()) {
    if (action.verb == Verb::kGet && action.resource == Jis().QualifiedName()) ++reads;
    if (action.verb == Verb::kCreate && action.resource == Deployments().QualifiedName()) {
      CHECK(reads >= 2);
    }
  }
  CHECK(reads >= 1);
  CHECK(f.controller->runner().queue().NumRequeues("default/ji") == 0);
  // Any later event about a live service proceeds.
  Json ji = f.Get(Jis(), "ji");
  ji["metadata"]["labels"]["touched"] = "yes";
  REQUIRE(f.env.client().Update(Jis(), ji).ok());
  REQUIRE(f.Converges([&] { return f.Children(); }));
}

TEST_CASE("JI: a name taken by an object this service does not control is left alone") {
  Fixture f;
  Json squatter = {{"apiVersion", "v1"},
                   {"kind", "Service"},
                   {"metadata", {{"name", "ji-cloud"}, {"namespace", "default"}}},
                   {"spec", {{"ports", Json::array({{{"port", 80}}})}}}};
  f.env.Create(Services(), squatter);
  f.env.Create(Jis(), JiObject());
  REQUIRE(f.Converges([&] {
    return ConditionIs(f.Status(), kSpecValidCondition, condition_status::kFalse);
  }));
  CHECK(f.Get(Services(), "ji-cloud")["spec"]["ports"][0]["port"] == 80);
  CHECK(f.env.Events("ji", "ChildConflict").size() >= 1);
  CHECK(f.Exists(Deployments(), "ji-deployment-cloud"));  // the rest is still created
}

TEST_CASE("JI: invalid specs give SpecValid=False, an Event and no children; a fix recovers") {
  Fixture f;
  SECTION("missing edge template") {
    Json ji = JiObject();
    ji["spec"]["edgeWorker"].erase("template");
    f.env.Create(Jis(), ji);
  }
  SECTION("no containers") {
    Json ji = JiObject();
    ji["spec"]["cloudWorker"]["template"]["spec"]["containers"] = Json::array();
    f.env.Create(Jis(), ji);
  }
  SECTION("a selector label overridden in the template") {
    Json ji = JiObject();
    ji["spec"]["edgeWorker"]["template"]["metadata"]["labels"]
      ["jointinferenceservice.sedna.io/name"] = "other";
    f.env.Create(Jis(), ji);
  }
  SECTION("a malformed node affinity") {
    Json ji = JiObject();
    auto& spec = ji["spec"]["edgeWorker"]["template"]["spec"];
    spec.erase("nodeName");
    spec["affinity"] = Json::parse(R"({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
        {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "Near"}]}]}}})");
    f.env.Create(Jis(), ji);
  }
  REQUIRE(f.Converges([&] {
    return ConditionIs(f.Status(), kSpecValidCondition, condition_status::kFalse);
  }));
  auto cond = FindStatusCondition(f.Status(), kSpecValidCondition);
  CHECK(cond->reason == "InvalidSpec");
  CHECK_FALSE(cond->message.empty());
  CHECK(f.Phase() == "Failed");
  CHECK(f.env.Events("ji", "InvalidSpec").size() == 1);
  CHECK(f.env.client().Objects(Deployments()).empty());
  CHECK(f.env.client().Objects(Services()).empty());
  CHECK_FALSE(f.env.edge().Holds("edge-0", kRef));
  // No retry storm: one status write, nothing more while nothing changes.
  const int writes = f.env.client().CountActions(Verb::kUpdateStatus);
  for (int i = 0; i < 10; ++i) {
    f.env.clock().Advance(absl::Minutes(1));
    REQUIRE(Eventually([&] { return f.controller->runner().queue().Len() == 0; }));
  }
  CHECK(f.controller->runner().queue().NumRequeues("default/ji") == 0);  // not an error
  CHECK(f.env.client().CountActions(Verb::kUpdateStatus) == writes);

  // The user fixes it.
  Json fixed = JiObject();
  fixed["metadata"] = f.Get(Jis(), "ji")["metadata"];
  REQUIRE(f.env.client().Update(Jis(), fixed).ok());
  REQUIRE(f.Converges([&] { return f.Children(); }));
  REQUIRE(f.Converges([&] {
    return ConditionIs(f.Status(), kSpecValidCondition, condition_status::kTrue) &&
           f.Phase() == "Pending";
  }));
}

TEST_CASE("JI: an unknown Model is waited for, then the service starts") {
  Fixture f;
  Json ji = JiObject();
  ji["spec"]["edgeWorker"]["model"]["name"] = "later";
  f.env.Create(Jis(), ji);
  REQUIRE(f.Converges([&] {
    return ConditionIs(f.Status(), kSpecValidCondition, condition_status::kFalse);
  }));
  auto cond = FindStatusCondition(f.Status(), kSpecValidCondition);
  CHECK(cond->reason == "ModelNotFound");
  CHECK(cond->message.find("\"later\"") != std::string::npos);
  CHECK(f.Phase() == "Pending");
  CHECK(f.env.Events("ji", "ModelNotFound").size() == 1);
  CHECK(f.env.client().Objects(Deployments()).empty());

  f.env.Create(api::resources::Models(), ModelObject("later", "/models/later/m.pb"));
  REQUIRE(f.Converges([&] { return f.Children(); }));
  CHECK(EnvOf(f.Get(Deployments(), "ji-deployment-edge")).at("MODEL_URL") ==
        "/home/data/models/later/m.pb");
  REQUIRE(f.Converges([&] {
    return ConditionIs(f.Status(), kSpecValidCondition, condition_status::kTrue);
  }));

  // SpecValid stays first and the phase history after it; together within the CRD's maxItems.
  for (int i = 0; i < 6; ++i) {
    f.SetDeploymentStatus("ji-deployment-cloud", 0,
                          Json::array({Cond("Progressing", "False", "ProgressDeadlineExceeded")}));
    REQUIRE(f.Converges([&] { return f.Phase() == "Failed"; }));
    f.MakeAvailable("ji-deployment-cloud");
    f.MakeAvailable("ji-deployment-edge");
    REQUIRE(f.Converges([&] { return f.Phase() == "Running"; }));
  }
  const Json conditions = f.Status()["conditions"];
  CHECK(conditions.size() == api::kMaxConditions);
  CHECK(conditions.front()["type"] == "SpecValid");
  CHECK(conditions.front()["status"] == "True");
  CHECK(conditions.back()["type"] == "Running");
  int spec_valid = 0;
  for (const Json& c : conditions) spec_valid += c["type"] == "SpecValid" ? 1 : 0;
  CHECK(spec_valid == 1);
}

TEST_CASE("JI: an s3 Model's missing Secret is waited for; then the storage-initializer") {
  Fixture f;
  Json big = ModelObject("s3big", "s3://models/big.pb");
  big["spec"]["credentialName"] = "mysecret";
  f.env.Create(api::resources::Models(), big);
  Json ji = JiObject();
  ji["spec"]["cloudWorker"]["model"]["name"] = "s3big";
  f.env.Create(Jis(), ji);
  REQUIRE(f.Converges([&] {
    return ConditionIs(f.Status(), kSpecValidCondition, condition_status::kFalse);
  }));
  CHECK(FindStatusCondition(f.Status(), kSpecValidCondition)->reason == "CredentialsNotFound");
  CHECK(f.env.Events("ji", "CredentialsNotFound").size() == 1);
  CHECK(f.env.client().Objects(Deployments()).empty());

  f.env.Create(kube::resources::Secrets(),
               testing::SednaS3Secret("mysecret", "DoNotLeak", "default", "minio:9000"));
  // Secrets are not watched: the service is looked at again after the recheck period.
  f.env.clock().Advance(kCredentialRecheckPeriod + absl::Seconds(1));
  REQUIRE(f.Converges([&] { return f.Children(); }));
  const Json cloud = f.Get(Deployments(), "ji-deployment-cloud");
  const Json& init = cloud["spec"]["template"]["spec"]["initContainers"][0];
  CHECK(init["name"] == "storage-initializer");
  CHECK(init["args"] == Json::array({"s3://models/big.pb", "/downloads/models/"}));
  CHECK(EnvOf(cloud).at("MODEL_URL") == "/downloads/models/big.pb");
  CHECK(cloud.dump().find("DoNotLeak") == std::string::npos);
}

TEST_CASE("JI: existing services are in the edge registry after PrimeEdge, with no writes") {
  ControllerEnv env;
  env.Create(api::resources::Models(), ModelObject("little"));
  env.Create(api::resources::Models(), ModelObject("big"));
  env.Create(Jis(), JiObject());
  auto controller = *JointInferenceController::Create(env.context());
  env.StartInformers(controller->informers());
  REQUIRE(controller->PrimeEdge().ok());
  CHECK(env.edge().Holds("edge-0", kRef));
  CHECK(env.client().CountActions(Verb::kUpdateStatus) == 0);
  CHECK(env.client().CountActions(Verb::kCreate, "deployments.apps") == 0);
  env.StopInformers();  // Before the controller goes.
}

TEST_CASE("JI: the registry entry skips the controller when the CRD is not served") {
  ControllerEnv env;
  env.client().SetServed(Jis(), false);
  absl::StatusOr<std::unique_ptr<GmController>> skipped = MakeJointInferenceController(env.context());
  REQUIRE(skipped.ok());
  CHECK(*skipped == nullptr);
  env.client().SetServed(Jis(), true);
  absl::StatusOr<std::unique_ptr<GmController>> made = MakeJointInferenceController(env.context());
  REQUIRE(made.ok());
  CHECK(*made != nullptr);
}

TEST_CASE("JI: a nodeSelector places one edge worker per matching edge node") {
  Fixture f({}, {EdgeNode("edge-a1", "a"), EdgeNode("edge-a2", "a"), EdgeNode("edge-b1", "b")});
  Json ji = JiObject();
  auto& spec = ji["spec"]["edgeWorker"]["template"]["spec"];
  spec.erase("nodeName");
  spec["nodeSelector"] = {{"zone", "a"}};
  f.env.Create(Jis(), ji);
  REQUIRE(f.Converges([&] {
    return f.Exists(Deployments(), "ji-deployment-edge-edge-a1") &&
           f.Exists(Deployments(), "ji-deployment-edge-edge-a2");
  }));
  CHECK_FALSE(f.Exists(Deployments(), "ji-deployment-edge"));
  CHECK_FALSE(f.Exists(Deployments(), "ji-deployment-edge-edge-b1"));
  CHECK(f.Get(Deployments(), "ji-deployment-edge-edge-a2")["spec"]["template"]["spec"]["nodeName"] ==
        "edge-a2");
  REQUIRE(f.Converges([&] {
    return f.env.edge().NodesOf(kRef) == std::vector<std::string>{"edge-a1", "edge-a2"};
  }));
  CHECK(f.env.edge().Get("edge-a2", kRef)->joint_inference_service().edge_worker().node_name() ==
        "edge-a2");

  // Running needs the cloud worker and one edge worker.
  f.MakeAvailable("ji-deployment-cloud");
  f.MakeAvailable("ji-deployment-edge-edge-a1");
  REQUIRE(f.Converges([&] { return f.Phase() == "Running"; }));
  CHECK(f.Status()["conditions"].back()["message"].get<std::string>().find(
            "1 of 2 edge workers available") != std::string::npos);

  // A node leaves the selection: its worker and its copy of the spec go.
  f.env.Patch(kube::resources::Nodes(), "", "edge-a2", {{"metadata", {{"labels", {{"zone", "b"}}}}}});
  REQUIRE(f.Converges([&] { return !f.Exists(Deployments(), "ji-deployment-edge-edge-a2"); }));
  REQUIRE(f.Converges([&] {
    return f.env.edge().NodesOf(kRef) == std::vector<std::string>{"edge-a1"};
  }));
  REQUIRE(f.Converges([&] {
    return f.models.Needs(kRequester) == std::vector<ModelNeed>{{"default/little", "edge-a1"}};
  }));

  // A new node joins.
  f.env.Create(kube::resources::Nodes(), EdgeNode("edge-a3", "a"));
  REQUIRE(f.Converges([&] { return f.Exists(Deployments(), "ji-deployment-edge-edge-a3"); }));
  REQUIRE(f.Converges([&] { return f.env.edge().Holds("edge-a3", kRef); }));
}

TEST_CASE("JI: a deleted service is removed from its edge node and its model needs released") {
  Fixture f;
  f.env.Create(Jis(), JiObject());
  // The spec goes to the node first, the model need right after: wait for both.
  REQUIRE(f.Converges([&] {
    return f.env.edge().Holds("edge-0", kRef) && !f.models.Needs(kRequester).empty();
  }));
  f.env.Delete(Jis(), "default", "ji");
  REQUIRE(f.Converges([&] { return !f.env.edge().Holds("edge-0", kRef); }));
  REQUIRE(f.Converges([&] { return f.models.Needs(kRequester).empty(); }));
  CHECK(f.controller->EdgeNodes("default/ji").empty());
}

edge::v1::StatusReport WorkerReport(const Json& ji, const std::string& owner_info) {
  edge::v1::StatusReport report;
  report.set_seq(7);
  report.mutable_ref()->set_kind("JointInferenceService");
  report.mutable_ref()->set_namespace_("default");
  report.mutable_ref()->set_name(kube::Name(ji));
  report.mutable_ref()->set_uid(kube::Uid(ji));
  report.set_observed_version("1");
  edge::v1::WorkerReport* worker = report.mutable_worker();
  worker->set_worker_name("edgeworker-abcde");
  worker->set_worker_kind("inference");
  worker->set_status("running");
  worker->set_owner_info_json(owner_info);
  return report;
}

TEST_CASE("JI: edge worker reports become status.metrics; foreign or stale reports are refused") {
  Fixture f;
  Json ji = f.env.Create(Jis(), JiObject());
  REQUIRE(f.Converges([&] { return f.env.edge().Holds("edge-0", kRef); }));
  const std::string info = R"({"inferenceNumber": 120, "hardExampleNumber": 7,
      "uploadCloudRatio": 0.058, "startTime": "2024-01-01 00:00:00", "updateTime": "x"})";

  ReportOutcome ok = f.controller->HandleReport("edge-0", WorkerReport(ji, info));
  CHECK(ok.code == ReportOutcome::Code::kAccepted);
  Json metrics = f.Status()["metrics"];
  REQUIRE(metrics.size() == 3);
  CHECK(metrics[0] == Json({{"key", "hardExampleNumber"}, {"value", "7"}}));
  CHECK(metrics[1] == Json({{"key", "inferenceNumber"}, {"value", "120"}}));
  CHECK(metrics[2] == Json({{"key", "uploadCloudRatio"}, {"value", "0.058"}}));
  // The controller's own status writes keep the metrics.
  f.MakeAvailable("ji-deployment-cloud");
  REQUIRE(f.Converges([&] { return f.Status().value("active", 0) == 1; }));
  CHECK(f.Status()["metrics"].size() == 3);

  // Through the hub's ownership check, as every report arrives.
  auto through_hub = [&](const std::string& node, const edge::v1::StatusReport& report) {
    return ReportThroughHub(f.env.edge(), *f.controller, node, report);
  };
  CHECK(through_hub("edge-9", WorkerReport(ji, info)).reason == "NotThisNode");
  edge::v1::StatusReport stale = WorkerReport(ji, info);
  stale.mutable_ref()->set_uid("old-uid");
  CHECK(through_hub("edge-0", stale).reason == "ObjectGone");
  edge::v1::StatusReport unknown = WorkerReport(ji, info);
  unknown.mutable_ref()->set_name("nope");
  CHECK(through_hub("edge-0", unknown).reason == "ObjectGone");
  CHECK(f.controller->HandleReport("edge-0", WorkerReport(ji, "[1,2]")).reason == "Invalid");
  edge::v1::StatusReport not_worker = WorkerReport(ji, info);
  not_worker.mutable_dataset()->set_number_of_samples(1);
  CHECK(f.controller->HandleReport("edge-0", not_worker).reason == "Invalid");
  CHECK(f.Status()["metrics"][1]["value"] == "120");
}

}  // namespace
}  // namespace nereid::gm
