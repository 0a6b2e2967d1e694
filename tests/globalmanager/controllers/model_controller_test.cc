// ModelController: the node set from requirements (RequireModel/ReleaseModel/SetRequirements) and
// the nereid.io/nodes annotation, removal, invalid specs, and ModelStatus reports → status.

#include "globalmanager/controllers/model_controller.h"

#include <catch2/catch.hpp>

#include <memory>

#include "absl/strings/str_cat.h"
#include "common/api/sedna_contract.h"
#include "globalmanager/controllers/spec_validity.h"
#include "globalmanager/controllers/status_conditions.h"
#include "tests/fakes/eventually.h"
#include "tests/globalmanager/controllers/controller_env.h"

namespace nereid::gm {
namespace {

using fakes::Eventually;
using fakes::Verb;
using kube::Json;
using testing::ControllerEnv;
using testing::ModelObject;
using testing::ReportThroughHub;

const kube::Resource& Models() { return api::resources::Models(); }
constexpr char kM1[] = "Model/default/m1";
const std::string kSha(64, 'a');
using Nodes = std::set<std::string>;

struct Fixture {
  ControllerEnv env;
  std::unique_ptr<ModelController> controller;

  explicit Fixture(const std::vector<Json>& objects = {}) {
    for (const Json& object : objects) env.Create(Models(), object);
    controller = env.Run(ModelController::Create(env.context()));
  }
  ~Fixture() { env.StopInformersAndController(*controller); }

  Json Status(const std::string& name = "m1") { return env.StatusOf(Models(), name); }
  Nodes EdgeNodes(const std::string& key = kM1) {
    std::vector<std::string> nodes = env.edge().NodesOf(key);
    return Nodes(nodes.begin(), nodes.end());
  }
  void WaitCached(const std::string& name = "m1") {
    const std::string rv = kube::ResourceVersion(env.Get(Models(), "default", name));
    REQUIRE(Eventually([&] {
      auto cached = controller->informers()[0]->GetLister().Get("default", name);
      return cached.ok() && kube::ResourceVersion(**cached) == rv;
    }));
  }
};

edge::v1::StatusReport ModelReport(uint64_t seq, const Json& object, bool verified,
                                   const std::string& sha, const std::string& reason = "",
                                   const std::string& message = "") {
  edge::v1::StatusReport report;
  report.set_seq(seq);
  report.mutable_ref()->set_kind("Model");
  report.mutable_ref()->set_namespace_("default");
  report.mutable_ref()->set_name(kube::Name(object));
  report.mutable_ref()->set_uid(kube::Uid(object));
  report.set_observed_version("1");
  edge::v1::ModelStatus* status = report.mutable_model();
  status->set_verified(verified);
  status->set_sha256(sha);
  status->mutable_update_time()->set_seconds(1'700'000'500);
  status->set_error_reason(reason);
  status->set_error_message(message);
  return report;
}

TEST_CASE("a Model nobody needs is sent nowhere") {
  Fixture f(std::vector<Json>{ModelObject("m1")});
  f.controller->Enqueue("default/m1");
  REQUIRE(Eventually([&] { return f.controller->runner().queue().Len() == 0; }));
  CHECK(f.env.edge().Calls().empty());
}

TEST_CASE("RequireModel places the Model at once; it stays while any requester needs it") {
  Fixture f(std::vector<Json>{ModelObject("m1", "/models/m.pb", std::string(64, 'A'))});
  f.controller->RequireModel("default/m1", "edge-0", "IncrementalLearningJob/default/il-1");
  // Synchronous: the registry has it before the call returns (what PrimeEdge callers rely on).
  CHECK(f.EdgeNodes() == Nodes{"edge-0"});
  edge::v1::Resource r = *f.env.edge().Get("edge-0", kM1);
  CHECK(r.model().url() == "/models/m.pb");
  CHECK(r.model().format() == "pb");
  CHECK(r.model().sha256() == std::string(64, 'a'));  // Lower-cased for the LC.
  CHECK(r.version() == "1");

  f.controller->RequireModel("default/m1", "edge-0", "JointInferenceService/default/ji-1");
  f.controller->RequireModel("default/m1", "edge-1", "JointInferenceService/default/ji-1");
  CHECK(f.EdgeNodes() == Nodes{"edge-0", "edge-1"});
  CHECK(f.env.edge().CountUpserts(kM1) == 2);  // edge-0 was not sent again.

  f.controller->ReleaseModel("default/m1", "edge-0", "IncrementalLearningJob/default/il-1");
  CHECK(f.EdgeNodes() == Nodes{"edge-0", "edge-1"});  // ji-1 still needs it on edge-0.
  f.controller->ReleaseAll("JointInferenceService/default/ji-1");
  CHECK(f.EdgeNodes().empty());
  CHECK(f.controller->PlacedNodes("default/m1").empty());
}

TEST_CASE("SetRequirements replaces a requester's needs (level-based use)") {
  Fixture f(std::vector<Json>{ModelObject("m1"), ModelObject("m2")});
  const std::string job = "IncrementalLearningJob/default/il-1";
  f.controller->SetRequirements(job, {{"default/m1", "edge-0"}, {"default/m2", "edge-0"}});
  CHECK(f.EdgeNodes(kM1) == Nodes{"edge-0"});
  CHECK(f.EdgeNodes("Model/default/m2") == Nodes{"edge-0"});
  // The stage moved to edge-1 and m2 is no longer needed.
  f.controller->SetRequirements(job, {{"default/m1", "edge-1"}});
  CHECK(f.EdgeNodes(kM1) == Nodes{"edge-1"});
  CHECK(f.EdgeNodes("Model/default/m2").empty());
  // Same needs again: no calls at all.
  const size_t calls = f.env.edge().Calls().size();
  f.controller->SetRequirements(job, {{"default/m1", "edge-1"}});
  CHECK(f.env.edge().Calls().size() == calls);
  f.controller->SetRequirements(job, {});
  CHECK(f.EdgeNodes(kM1).empty());
}

TEST_CASE("needs declared before the Model exists take effect when it is created") {
  Fixture f;
  f.controller->RequireModel("default/m1", "edge-0", "IncrementalLearningJob/default/il-1");
  CHECK(f.env.edge().Calls().empty());
  f.env.Create(Models(), ModelObject("m1"));
  REQUIRE(Eventually([&] { return f.EdgeNodes() == Nodes{"edge-0"}; }));
}

TEST_CASE("the nereid.io/nodes annotation sends the Model to the listed nodes") {
  Json model = ModelObject("m1");
  model["metadata"]["annotations"][std::string(kModelNodesAnnotation)] = "edge-0, edge-1";
  Fixture f(std::vector<Json>{model});
  // PrimeEdge already placed it.
  CHECK(f.EdgeNodes() == Nodes{"edge-0", "edge-1"});
  f.env.Patch(Models(), "default", "m1",
              {{"metadata", {{"annotations", {{std::string(kModelNodesAnnotation), "edge-1"}}}}}});
  REQUIRE(Eventually([&] { return f.EdgeNodes() == Nodes{"edge-1"}; }));
}

TEST_CASE("a spec change sends the new version to every node; a delete removes it everywhere") {
  Fixture f(std::vector<Json>{ModelObject("m1")});
  f.controller->RequireModel("default/m1", "edge-0", "a");
  f.controller->RequireModel("default/m1", "edge-1", "b");
  f.env.Patch(Models(), "default", "m1", {{"spec", {{"url", "/models/v2.pb"}}}});
  REQUIRE(Eventually([&] {
    auto a = f.env.edge().Get("edge-0", kM1);
    auto b = f.env.edge().Get("edge-1", kM1);
    return a && b && a->version() == "2" && b->version() == "2";
  }));
  CHECK(f.env.edge().Get("edge-1", kM1)->model().url() == "/models/v2.pb");
  f.env.Delete(Models(), "default", "m1");
  REQUIRE(Eventually([&] { return f.EdgeNodes().empty(); }));
  // The needs remain: a re-created Model goes back to the nodes.
  f.env.Create(Models(), ModelObject("m1"));
  REQUIRE(Eventually([&] { return f.EdgeNodes() == Nodes{"edge-0", "edge-1"}; }));
}

TEST_CASE("an invalid Model is not sent and says why") {
  Fixture f(std::vector<Json>{ModelObject("m1", "/models/m.pb", "not-a-digest")});
  f.controller->RequireModel("default/m1", "edge-0", "a");
  CHECK(f.EdgeNodes().empty());
  REQUIRE(Eventually([&] { return ConditionIs(f.Status(), kSpecValidCondition, "False"); }));
  CHECK(f.Status()["reason"] == "InvalidSpec");
  CHECK(f.Status()["message"].get<std::string>().find("spec.sha256") != std::string::npos);
  REQUIRE(f.env.Events("m1", "InvalidSpec").size() == 1);
  f.env.Patch(Models(), "default", "m1", {{"spec", {{"sha256", kSha}}}});
  REQUIRE(Eventually([&] { return f.EdgeNodes() == Nodes{"edge-0"}; }));
  REQUIRE(Eventually([&] { return ConditionIs(f.Status(), kSpecValidCondition, "True"); }));
}

TEST_CASE("ModelStatus reports become verified/sha256/condition; metrics are kept") {
  Json model = ModelObject("m1", "/models/m.pb", kSha);
  Fixture f(std::vector<Json>{model});
  Json object = f.env.Get(Models(), "default", "m1");
  object["status"] = {{"metrics", Json::array({{{"key", "precision"}, {"value", "0.9"}}})}};
  REQUIRE(f.env.client().UpdateStatus(Models(), object).ok());
  f.controller->RequireModel("default/m1", "edge-0", "a");
  f.controller->RequireModel("default/m1", "edge-1", "a");

  ReportOutcome ok = f.controller->HandleReport("edge-0", ModelReport(1, object, true, kSha));
  CHECK(ok.code == ReportOutcome::Code::kAccepted);
  Json status = f.Status();
  CHECK(status["verified"] == true);
  CHECK(status["sha256"] == kSha);
  CHECK(status["updateTime"] == kube::FormatTimestamp(absl::FromUnixSeconds(1'700'000'500)));
  CHECK(status["observedGeneration"] == 1);
  CHECK(status["metrics"][0]["key"] == "precision");
  CHECK(ConditionIs(status, "Verified", "True"));
  CHECK(f.env.Events("m1", "ModelVerified").size() == 1);

  const std::string wrong(64, 'b');
  ReportOutcome bad = f.controller->HandleReport(
      "edge-1", ModelReport(2, object, false, wrong, "DigestMismatch", "sha256 is bbbb…"));
  CHECK(bad.code == ReportOutcome::Code::kAccepted);
  status = f.Status();
  CHECK(status["verified"] == false);
  CHECK(status["sha256"] == wrong);
  CHECK(status["reason"] == "DigestMismatch");
  CHECK(status["message"] == "node edge-1: sha256 is bbbb…");
  CHECK(status["metrics"][0]["value"] == "0.9");
  std::optional<api::Condition> c = FindStatusCondition(status, "Verified");
  REQUIRE(c.has_value());
  CHECK(c->status == "False");
  CHECK(c->reason == "DigestMismatch");
  std::vector<Json> events = f.env.Events("m1", "VerificationFailed");
  REQUIRE(events.size() == 1);
  CHECK(events[0]["type"] == "Warning");

  SECTION("verified again clears the error") {
    CHECK(f.controller->HandleReport("edge-1", ModelReport(3, object, true, kSha)).code ==
          ReportOutcome::Code::kAccepted);
    status = f.Status();
    CHECK_FALSE(status.contains("reason"));
    CHECK(ConditionIs(status, "Verified", "True"));
    CHECK(f.env.Events("m1", "ModelVerified").size() == 2);  // Became verified again (edge-1).
  }
}

TEST_CASE("a Model without sha256 says nothing was given to verify it against, without a Warning") {
  Fixture f(std::vector<Json>{ModelObject("m1", "/models/m.pb"),
                              ModelObject("m2", "https://models.example/m.onnx")});
  f.WaitCached("m1");
  f.WaitCached("m2");
  for (const char* name : {"m1", "m2"}) {
    f.controller->RequireModel(absl::StrCat("default/", name), "edge-0", "a");
    Json object = f.env.Get(Models(), "default", name);
    CHECK(f.controller->HandleReport("edge-0", ModelReport(1, object, false, "")).code ==
          ReportOutcome::Code::kAccepted);
  }
  Json status = f.Status("m1");
  CHECK(status["verified"] == false);
  CHECK(status["reason"] == "NoDigest");
  CHECK(status["message"] ==
        "node edge-0: the model is present; spec.sha256 is not set, so there is nothing to verify "
        "it against");
  std::optional<api::Condition> c = FindStatusCondition(status, "Verified");
  REQUIRE(c.has_value());
  CHECK(c->status == "False");
  CHECK(c->reason == "NoDigest");
  CHECK(f.Status("m2")["message"].get<std::string>().find("an http(s) model is fetched only") !=
        std::string::npos);
  CHECK(f.env.Events("m1", "VerificationFailed").empty());
  CHECK(f.env.Events("m2", "VerificationFailed").empty());

  // A report with a reason is still the LC's failure.
  Json object = f.env.Get(Models(), "default", "m1");
  CHECK(f.controller->HandleReport("edge-0", ModelReport(2, object, false, "", "PathNotFound",
                                                         "/models/m.pb does not exist"))
            .code == ReportOutcome::Code::kAccepted);
  CHECK(f.Status("m1")["reason"] == "PathNotFound");
  CHECK(f.env.Events("m1", "VerificationFailed").size() == 1);
}

TEST_CASE("a model report from a node the Model is not sent to is refused") {
  Fixture f(std::vector<Json>{ModelObject("m1")});
  Json object = f.env.Get(Models(), "default", "m1");
  f.controller->RequireModel("default/m1", "edge-0", "a");
  REQUIRE(Eventually([&] { return f.env.edge().Holds("edge-0", kM1); }));
  ReportOutcome outcome = ReportThroughHub(f.env.edge(), *f.controller, "edge-7",
                                           ModelReport(1, object, true, kSha));
  CHECK(outcome.code == ReportOutcome::Code::kRejected);
  CHECK(outcome.reason == "NotThisNode");
  CHECK(f.env.client().CountActions(Verb::kUpdateStatus) == 0);
}

TEST_CASE("a model report about a re-created Model is rejected as ObjectGone") {
  Fixture f(std::vector<Json>{ModelObject("m1")});
  Json old_object = f.env.Get(Models(), "default", "m1");
  f.controller->RequireModel("default/m1", "edge-0", "a");
  f.env.Delete(Models(), "default", "m1");
  f.env.Create(Models(), ModelObject("m1"));
  REQUIRE(Eventually([&] {
    auto r = f.env.edge().Get("edge-0", kM1);
    return r && r->ref().uid() != kube::Uid(old_object);
  }));
  ReportOutcome outcome =
      f.controller->HandleReport("edge-0", ModelReport(1, old_object, true, kSha));
  CHECK(outcome.code == ReportOutcome::Code::kRejected);
  CHECK(outcome.reason == "ObjectGone");
}

}  // namespace
}  // namespace nereid::gm
