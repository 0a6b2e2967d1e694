// FeatureExtractionController on the fake API: Sedna's children (names, labels, ports, env),
// replicas defaulting to 1, truthful status (no Failed on the second sync, recovery), spec
// changes, self-healing, a missing Model, an invalid spec, edge placement and worker reports.

#include "globalmanager/controllers/feature_extraction_controller.h"

#include <catch2/catch.hpp>

#include "common/api/sedna_contract.h"
#include "common/kube/errors.h"
#include "globalmanager/controllers/s3_credentials.h"
#include "globalmanager/controllers/worker_template.h"
#include "tests/globalmanager/controllers/multi_edge_fixture.h"

namespace nereid::gm {
namespace {

using kube::Json;
using testing::EnvOf;
using testing::ModelObject;
using testing::ReportThroughHub;

const kube::Resource& Fes() { return api::resources::FeatureExtractionServices(); }
const kube::Resource& Deployments() { return kube::resources::Deployments(); }
const kube::Resource& Services() { return kube::resources::Services(); }
constexpr char kWorkerRef[] = "Worker/default/fe-deployment-fe";
constexpr char kRequester[] = "FeatureExtractionService/default/fe";

using Fixture = testing::ServiceFixture<FeatureExtractionController>;


// Sedna's pedestrian-tracking manifest, pinned to edge-0, without `replicas`.
Json FeObject() {
  return Json::parse(R"({
    "apiVersion": "sedna.io/v1alpha1", "kind": "FeatureExtractionService",
    "metadata": {"name": "fe", "namespace": "default"},
    "spec": {
      "kafkaSupport": true,
      "model": {"name": "m3l"},
      "selector": {"matchLabels": {"app": "fe"}},
      "strategy": {"type": "Recreate"},
      "template": {"metadata": {"labels": {"app": "fe"}},
                   "spec": {"nodeName": "edge-0",
                            "containers": [{"name": "fe", "image": "fe:1",
                                            "env": [{"name": "input_shape",
                                                     "value": "256,128"}]}]}}
    }
  })");
}

bool Children(Fixture& f) {
  return f.Exists(Deployments(), "fe-deployment-fe") && f.Exists(Services(), "fe-fe");
}

TEST_CASE("FE: Sedna's Deployment and Service, labels, env, owner; replicas default to 1") {
  Fixture f(Fes(), {}, {ModelObject("m3l", "/models/m3l/m.pth")});
  Json fe = f.env.Create(Fes(), FeObject());
  const std::string uid = kube::Uid(fe);
  REQUIRE(f.Converges([&] { return Children(f); }));

  Json d = f.Get(Deployments(), "fe-deployment-fe");
  Json svc = f.Get(Services(), "fe-fe");
  for (const Json* child : {&d, &svc}) {
    auto owner = kube::ControllerOf(*child);
    REQUIRE(owner.has_value());
    CHECK(owner->uid == uid);
    CHECK(owner->kind == "FeatureExtractionService");
    CHECK(owner->block_owner_deletion);
    CHECK(kube::Label(*child, "featureextractionservice.sedna.io/name") == "fe");
    CHECK(kube::Label(*child, "featureextractionservice.sedna.io/uid") == uid);
    CHECK(kube::Label(*child, "featureextractionservice.sedna.io/worker-type") == "fe");
  }
  CHECK(d["spec"]["replicas"] == 1);  // Absent in the spec: Sedna's GM panics here.
  CHECK(d["spec"]["strategy"]["type"] == "Recreate");  // Sedna drops it.
  CHECK(d["spec"]["selector"]["matchLabels"]["app.sedna.io"] == "fe-fe-svc");
  CHECK(d["spec"]["template"]["metadata"]["labels"]["app"] == "fe");
  CHECK(d["spec"]["template"]["spec"]["nodeName"] == "edge-0");
  auto env = EnvOf(d);
  CHECK(env.at("NAMESPACE") == "default");
  CHECK(env.at("SERVICE_NAME") == "fe");
  CHECK(env.at("JOB_NAME") == "fe");
  CHECK(env.at("WORKER_NAME").size() == 5);
  CHECK(env.at("LC_SERVER") == "http://localhost:9100");
  CHECK(env.at("KAFKA_ENABLED") == "true");
  CHECK(env.at("MODEL_URL") == "/home/data/models/m3l/m.pth");
  CHECK(env.at("DATA_PATH_PREFIX") == "/home/data");
  CHECK(env.at("input_shape") == "256,128");
  CHECK(svc["spec"]["ports"][0] == Json({{"name", "tcp-0"}, {"port", 6000},
                                         {"targetPort", 6000}, {"protocol", "TCP"}}));
  CHECK(svc["spec"]["selector"]["featureextractionservice.sedna.io/worker-type"] == "fe");

  // Edge placement: the worker is announced to edge-0, the model required there.
  REQUIRE(f.Converges([&] { return f.env.edge().Holds("edge-0", kWorkerRef); }));
  edge::v1::Resource r = *f.env.edge().Get("edge-0", kWorkerRef);
  CHECK(r.ref().uid() == uid);
  CHECK(r.worker().job_kind() == "FeatureExtractionService");
  CHECK(r.worker().job_name() == "fe");
  CHECK(r.worker().worker_type() == "fe");
  CHECK(r.worker().node_name() == "edge-0");
  CHECK(f.controller->EdgeNodes("default/fe") == std::vector<std::string>{"edge-0"});
  // The service itself too, so edge-0's LC forwards its workers' reports and the hub admits them.
  const std::string service_ref = "FeatureExtractionService/default/fe";
  REQUIRE(f.env.edge().Holds("edge-0", service_ref));
  edge::v1::Resource owner = *f.env.edge().Get("edge-0", service_ref);
  CHECK(owner.ref().uid() == uid);
  REQUIRE(owner.has_feature_extraction_service());
  CHECK(owner.feature_extraction_service().node_name() == "edge-0");
  CHECK(owner.feature_extraction_service().worker_type() == "fe");
  REQUIRE(f.Converges([&] {
    return f.models.Needs(kRequester) == std::vector<ModelNeed>{{"default/m3l", "edge-0"}};
  }));

  REQUIRE(f.Converges([&] { return f.Phase("fe") == "Pending"; }));
  CHECK(f.Status("fe")["observedGeneration"] == 1);
  CHECK(f.Status("fe").contains("startTime"));
  CHECK(f.env.Events("fe", "SuccessfulCreate").size() >= 1);

  f.env.Delete(Fes(), "default", "fe");
  REQUIRE(f.Converges([&] { return !f.env.edge().Holds("edge-0", kWorkerRef); }));
  CHECK_FALSE(f.env.edge().Holds("edge-0", service_ref));
  REQUIRE(f.Converges([&] { return f.models.Needs(kRequester).empty(); }));
}

TEST_CASE("FE: the pass after its own status write, before the caches show the children") {
  // The status write re-queues the service at once, before the child informers have delivered
  // what the first pass created: that pass must neither create them again (AlreadyExists) nor
  // judge them missing (a second status write), and a new service needs no live read.
  Fixture f(Fes(), {}, {ModelObject("m3l")});
  f.FreezeCaches({&Deployments(), &Services()});
  f.env.client().ClearActions();
  f.env.Create(Fes(), FeObject());
  // Two passes: the service's creation and our status write. (Waiting reads no object: the
  // test's own reads would count.)
  REQUIRE(f.Converges([&] { return f.IdleAfter(2); }));
  CHECK(f.env.client().CountActions(fakes::Verb::kCreate, Deployments().QualifiedName()) == 1);
  CHECK(f.env.client().CountActions(fakes::Verb::kCreate, Services().QualifiedName()) == 1);
  CHECK(f.env.client().CountActions(fakes::Verb::kUpdateStatus, Fes().QualifiedName()) == 1);
  CHECK(f.env.client().CountActions(fakes::Verb::kGet, Fes().QualifiedName()) == 0);
  // Judged from the Deployment as created, not as "not created yet".
  CHECK(f.Phase("fe") == "Pending");
  CHECK(f.Status("fe").dump().find("not created yet") == std::string::npos);
}

TEST_CASE("FE: Running from the Deployment's status, Failed only on a real failure, then recovery") {
  Fixture f(Fes(), {}, {ModelObject("m3l")});
  f.env.Create(Fes(), FeObject());
  REQUIRE(f.Converges([&] { return Children(f); }));
  // Sedna marks every FE Failed on its second sync; a Deployment still rolling out is Pending.
  f.SetDeploymentStatus("fe-deployment-fe", 0,
                        Json::array({testing::DeploymentCondition("Progressing", "True",
                                                                  "ReplicaSetUpdated")}));
  REQUIRE(f.Converges([&] { return f.Phase("fe") == "Pending"; }));
  CHECK(f.Status("fe")["failed"] == 0);

  f.MakeAvailable("fe-deployment-fe");
  REQUIRE(f.Converges([&] { return f.Phase("fe") == "Running"; }));
  CHECK(f.Status("fe")["active"] == 1);
  CHECK(f.LastReason("fe") == "WorkersAvailable");
  CHECK(f.env.Events("fe", "Running").size() == 1);

  f.FailDeployment("fe-deployment-fe");
  REQUIRE(f.Converges([&] { return f.Phase("fe") == "Failed"; }));
  CHECK(f.Status("fe")["failed"] == 1);
  CHECK(f.LastReason("fe") == "WorkerFailed");
  CHECK(f.env.Events("fe", "WorkerFailed").size() == 1);

  f.MakeAvailable("fe-deployment-fe");
  REQUIRE(f.Converges([&] { return f.Phase("fe") == "Running"; }));
  CHECK(f.env.Events("fe", "Recovered").size() == 1);
  CHECK(f.Status("fe")["conditions"].size() <= api::kMaxConditions);
}

TEST_CASE("FE: spec changes roll out, hand scaling is undone, deleted children come back") {
  Fixture f(Fes(), {}, {ModelObject("m3l")});
  f.env.Create(Fes(), FeObject());
  REQUIRE(f.Converges([&] { return Children(f); }));
  const std::string old_hash =
      *kube::Annotation(f.Get(Deployments(), "fe-deployment-fe"), kTemplateHashAnnotation);

  Json tpl = FeObject()["spec"]["template"];
  tpl["spec"]["containers"][0]["image"] = "fe:2";
  f.env.Patch(Fes(), "default", "fe", {{"spec", {{"template", tpl}, {"replicas", 3}}}});
  REQUIRE(f.Converges([&] {
    Json d = f.Get(Deployments(), "fe-deployment-fe");
    return d["spec"]["template"]["spec"]["containers"][0]["image"] == "fe:2" &&
           d["spec"]["replicas"] == 3;
  }));
  CHECK(*kube::Annotation(f.Get(Deployments(), "fe-deployment-fe"), kTemplateHashAnnotation) !=
        old_hash);
  CHECK(f.env.Events("fe", "SuccessfulUpdate").size() >= 1);
  REQUIRE(f.Converges(
      [&] { return f.env.edge().Get("edge-0", kWorkerRef)->version() == "2"; }));

  Json scaled = f.Get(Deployments(), "fe-deployment-fe");
  scaled["spec"]["replicas"] = 7;
  REQUIRE(f.env.client().Update(Deployments(), scaled).ok());
  REQUIRE(f.Converges(
      [&] { return f.Get(Deployments(), "fe-deployment-fe")["spec"]["replicas"] == 3; }));

  const std::string old_uid = kube::Uid(f.Get(Services(), "fe-fe"));
  f.env.Delete(Services(), "default", "fe-fe");
  f.env.Delete(Deployments(), "default", "fe-deployment-fe");
  REQUIRE(f.Converges([&] {
    auto s = f.env.client().Get(Services(), "default", "fe-fe");
    return s.ok() && kube::Uid(*s) != old_uid && f.Exists(Deployments(), "fe-deployment-fe");
  }));
  CHECK(f.env.client().Objects(Deployments()).size() == 1);
  CHECK(f.env.client().Objects(Services()).size() == 1);
}

TEST_CASE("FE: a missing Model is a condition and an Event; the service proceeds when it appears") {
  Fixture f(Fes());
  f.env.Create(Fes(), FeObject());
  REQUIRE(f.Converges([&] { return f.SpecValidReason("fe") == "ModelNotFound"; }));
  CHECK(f.Phase("fe") == "Pending");
  CHECK_FALSE(f.Exists(Deployments(), "fe-deployment-fe"));
  REQUIRE(f.Converges([&] { return f.env.Events("fe", "ModelNotFound").size() == 1; }));

  f.env.Create(api::resources::Models(), ModelObject("m3l"));
  REQUIRE(f.Converges([&] { return Children(f); }));
  REQUIRE(f.Converges([&] { return f.SpecValidReason("fe") == "Valid"; }));
}

TEST_CASE("FE: an s3 Model's Secret is waited for; then the storage-initializer and secretKeyRef") {
  Json model = ModelObject("m3l", "s3://models/m3l/m.pth");
  model["spec"]["credentialName"] = "mysecret";
  Fixture f(Fes(), {}, {model});
  f.env.Create(Fes(), FeObject());
  REQUIRE(f.Converges([&] { return f.SpecValidReason("fe") == "CredentialsNotFound"; }));
  CHECK(f.Phase("fe") == "Pending");
  CHECK_FALSE(f.Exists(Deployments(), "fe-deployment-fe"));
  REQUIRE(f.Converges([&] { return f.env.Events("fe", "CredentialsNotFound").size() == 1; }));

  f.env.Create(kube::resources::Secrets(), testing::SednaS3Secret("mysecret", "DoNotLeak"));
  // Secrets are not watched: the service is looked at again after the recheck period.
  f.env.clock().Advance(kCredentialRecheckPeriod + absl::Seconds(1));
  REQUIRE(f.Converges([&] { return Children(f); }));
  const Json d = f.Get(Deployments(), "fe-deployment-fe");
  const Json& pod = d["spec"]["template"]["spec"];
  REQUIRE(pod["initContainers"].size() == 1);
  const Json& init = pod["initContainers"][0];
  CHECK(init["name"] == "storage-initializer");
  CHECK(init["args"] == Json::array({"s3://models/m3l/m.pth", "/downloads/models/m3l/"}));
  std::map<std::string, Json> init_env;
  for (const Json& e : init["env"]) init_env[e["name"]] = e;
  CHECK(init_env.at("S3_ENDPOINT_URL")["value"] == "http://127.0.0.1:9000");
  CHECK(init_env.at("SECRET_ACCESS_KEY")["valueFrom"]["secretKeyRef"] ==
        Json{{"name", "mysecret"}, {"key", "SECRET_ACCESS_KEY"}});
  CHECK(init_env.at("ACCESS_KEY_ID")["valueFrom"]["secretKeyRef"]["name"] == "mysecret");
  CHECK(EnvOf(d).at("MODEL_URL") == "/downloads/models/m3l/m.pth");
  CHECK(d.dump().find("DoNotLeak") == std::string::npos);
  REQUIRE(f.Converges([&] { return f.SpecValidReason("fe") == "Valid"; }));
}

TEST_CASE("FE: a Forbidden Secret is a CredentialsForbidden condition, not a failure") {
  Json model = ModelObject("m3l", "s3://models/m3l/m.pth");
  model["spec"]["credentialName"] = "mysecret";
  Fixture f(Fes(), {}, {model});
  f.env.Create(kube::resources::Secrets(), testing::SednaS3Secret("mysecret", "DoNotLeak"));
  f.env.client().FailNext(fakes::Verb::kGet, 1000, kube::StatusFromResponse(403, ""), "secrets");
  f.env.Create(Fes(), FeObject());
  REQUIRE(f.Converges([&] { return f.SpecValidReason("fe") == "CredentialsForbidden"; }));
  CHECK(f.Phase("fe") == "Pending");
  CHECK_FALSE(f.Exists(Deployments(), "fe-deployment-fe"));

  f.env.client().ClearFailures();
  f.env.clock().Advance(kCredentialRecheckPeriod + absl::Seconds(1));
  REQUIRE(f.Converges([&] { return Children(f); }));
}

TEST_CASE("FE: an invalid spec creates nothing and says why, once") {
  Fixture f(Fes(), {}, {ModelObject("m3l")});
  Json fe = FeObject();
  fe["spec"]["template"]["spec"]["containers"] = Json::array();
  fe["spec"]["replicas"] = -2;
  f.env.Create(Fes(), fe);
  REQUIRE(f.Converges([&] { return f.SpecValidReason("fe") == "InvalidSpec"; }));
  CHECK(f.Phase("fe") == "Failed");
  const std::string message = f.Status("fe")["conditions"][0]["message"];
  CHECK(message.find("spec.replicas") != std::string::npos);
  CHECK(message.find("spec.template.spec.containers") != std::string::npos);
  CHECK(f.env.client().Objects(Deployments()).empty());
  REQUIRE(f.Converges([&] { return f.env.Events("fe", "InvalidSpec").size() == 1; }));

  // Fixed: the children appear and SpecValid turns True.
  Json fixed = FeObject()["spec"];
  fixed["replicas"] = nullptr;  // Merge patch: removes it.
  f.env.Patch(Fes(), "default", "fe", {{"spec", fixed}});
  REQUIRE(f.Converges([&] { return Children(f); }));
  REQUIRE(f.Converges([&] { return f.SpecValidReason("fe") == "Valid"; }));
}

edge::v1::StatusReport WorkerReport(const Json& fe, const std::string& owner_info) {
  edge::v1::StatusReport report;
  report.set_seq(3);
  report.mutable_ref()->set_kind("FeatureExtractionService");
  report.mutable_ref()->set_namespace_("default");
  report.mutable_ref()->set_name(kube::Name(fe));
  report.mutable_ref()->set_uid(kube::Uid(fe));
  edge::v1::WorkerReport* worker = report.mutable_worker();
  worker->set_worker_name("abcde");
  worker->set_owner_info_json(owner_info);
  return report;
}

TEST_CASE("FE: worker reports become status.metrics, bounded; foreign or stale ones are refused") {
  Fixture f(Fes(), {}, {ModelObject("m3l")});
  Json fe = f.env.Create(Fes(), FeObject());
  REQUIRE(f.Converges([&] { return f.env.edge().Holds("edge-0", kWorkerRef); }));

  ReportOutcome ok = f.controller->HandleReport(
      "edge-0", WorkerReport(fe, R"({"extracted": 12, "queue": "ok", "startTime": "x"})"));
  CHECK(ok.code == ReportOutcome::Code::kAccepted);
  Json metrics = f.Status("fe")["metrics"];
  REQUIRE(metrics.size() == 2);
  CHECK(metrics[0] == Json({{"key", "extracted"}, {"value", "12"}}));
  CHECK(metrics[1] == Json({{"key", "queue"}, {"value", "ok"}}));

  Json many = Json::object();
  for (int i = 0; i < 100; ++i) many["k" + std::to_string(1000 + i)] = i;
  CHECK(f.controller->HandleReport("edge-0", WorkerReport(fe, many.dump())).code ==
        ReportOutcome::Code::kAccepted);
  CHECK(f.Status("fe")["metrics"].size() == kMaxServiceMetrics);

  // Through the hub's ownership check, as every report arrives.
  CHECK(ReportThroughHub(f.env.edge(), *f.controller, "edge-9", WorkerReport(fe, "{}")).reason ==
        "NotThisNode");
  edge::v1::StatusReport stale = WorkerReport(fe, "{}");
  stale.mutable_ref()->set_uid("old-uid");
  CHECK(ReportThroughHub(f.env.edge(), *f.controller, "edge-0", stale).reason == "ObjectGone");
  CHECK(f.controller->HandleReport("edge-0", WorkerReport(fe, "[1]")).reason == "Invalid");
}

TEST_CASE("FE: the registry entry skips the controller when the CRD is not served") {
  testing::ControllerEnv env;
  env.client().SetServed(Fes(), false);
  absl::StatusOr<std::unique_ptr<GmController>> skipped =
      MakeFeatureExtractionController(env.context());
  REQUIRE(skipped.ok());
  CHECK(*skipped == nullptr);
}

}  // namespace
}  // namespace nereid::gm
