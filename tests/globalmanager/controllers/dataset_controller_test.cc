// DatasetController: downstream dispatch from the informer cache (send, move, delete, invalid
// spec) and upstream reports → status through the status subresource.

#include "globalmanager/controllers/dataset_controller.h"

#include <catch2/catch.hpp>

#include <memory>
#include <atomic>
#include <thread>

#include "common/api/sedna_contract.h"
#include "common/job/expectations.h"
#include "common/kube/errors.h"
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
using testing::DatasetObject;
using testing::ReportThroughHub;

const kube::Resource& Datasets() { return api::resources::Datasets(); }
constexpr char kD1[] = "Dataset/default/d1";

struct Fixture {
  ControllerEnv env;
  std::unique_ptr<DatasetController> controller;

  // Creates the controller; `objects` exist before the informers start.
  explicit Fixture(const std::vector<Json>& objects = {}) {
    for (const Json& object : objects) env.Create(Datasets(), object);
    controller = env.Run(DatasetController::Create(env.context()));
  }
  ~Fixture() { env.StopInformersAndController(*controller); }

  Json Status(const std::string& name = "d1") { return env.StatusOf(Datasets(), name); }
  // Waits until the informer cache has `name` at the API's resourceVersion (reports read it).
  // The cache holds the API's current version or a later one (the controller may write again).
  void WaitCached(const std::string& name = "d1") {
    const std::string rv = kube::ResourceVersion(env.Get(Datasets(), "default", name));
    REQUIRE(Eventually([&] {
      auto cached = controller->informers()[0]->GetLister().Get("default", name);
      return cached.ok() && job::ResourceVersionAtLeast(kube::ResourceVersion(**cached), rv);
    }));
  }
};

edge::v1::StatusReport CountReport(uint64_t seq, const Json& object, int64_t samples,
                                   absl::Time counted_at, const std::string& version = "1") {
  edge::v1::StatusReport report;
  report.set_seq(seq);
  report.mutable_ref()->set_kind("Dataset");
  report.mutable_ref()->set_namespace_(kube::Namespace(object));
  report.mutable_ref()->set_name(kube::Name(object));
  report.mutable_ref()->set_uid(kube::Uid(object));
  report.set_observed_version(version);
  report.mutable_dataset()->set_number_of_samples(samples);
  report.mutable_dataset()->mutable_update_time()->set_seconds(absl::ToUnixSeconds(counted_at));
  return report;
}

edge::v1::StatusReport ErrorReport(uint64_t seq, const Json& object, const std::string& reason,
                                   const std::string& message) {
  edge::v1::StatusReport report = CountReport(seq, object, 0, absl::UnixEpoch());
  report.mutable_dataset()->clear_update_time();
  report.mutable_dataset()->set_error_reason(reason);
  report.mutable_dataset()->set_error_message(message);
  return report;
}

TEST_CASE("a Dataset is sent to its node as a typed DatasetSpec versioned by generation") {
  Fixture f;
  Json created = f.env.Create(Datasets(), DatasetObject("d1", "edge-0", "/data/a.csv", "CSV"));
  REQUIRE(Eventually([&] { return f.env.edge().Holds("edge-0", kD1); }));
  edge::v1::Resource r = *f.env.edge().Get("edge-0", kD1);
  CHECK(r.ref().kind() == "Dataset");
  CHECK(r.ref().namespace_() == "default");
  CHECK(r.ref().name() == "d1");
  CHECK(r.ref().uid() == kube::Uid(created));
  CHECK(r.version() == "1");
  CHECK(r.dataset().url() == "/data/a.csv");
  CHECK(r.dataset().format() == "CSV");
  CHECK(r.dataset().node_name() == "edge-0");
  CHECK(f.controller->PlacedNode("default/d1") == "edge-0");
  CHECK(f.env.edge().NodesOf(kD1) == std::vector<std::string>{"edge-0"});
}

TEST_CASE("existing Datasets are in the registry after PrimeEdge, before any worker runs") {
  ControllerEnv env;
  env.Create(Datasets(), DatasetObject("d1", "edge-0"));
  env.Create(Datasets(), DatasetObject("bad", "edge-0", "relative/path.txt"));
  auto controller = *DatasetController::Create(env.context());
  env.StartInformers(controller->informers());
  REQUIRE(controller->PrimeEdge().ok());
  CHECK(env.edge().Holds("edge-0", kD1));
  CHECK_FALSE(env.edge().Holds("edge-0", "Dataset/default/bad"));
  CHECK(env.client().CountActions(Verb::kUpdateStatus) == 0);  // Priming writes nothing.
  env.StopInformers();  // Before the controller goes.
}

TEST_CASE("a changed nodeName moves the Dataset and records an Event") {
  Fixture f;
  f.env.Create(Datasets(), DatasetObject("d1", "edge-0"));
  REQUIRE(Eventually([&] { return f.env.edge().Holds("edge-0", kD1); }));
  f.env.Patch(Datasets(), "default", "d1", {{"spec", {{"nodeName", "edge-1"}}}});
  REQUIRE(Eventually([&] { return f.env.edge().Holds("edge-1", kD1); }));
  CHECK_FALSE(f.env.edge().Holds("edge-0", kD1));
  CHECK(f.env.edge().Get("edge-1", kD1)->version() == "2");
  CHECK(f.env.edge().Get("edge-1", kD1)->dataset().node_name() == "edge-1");
  CHECK(f.controller->PlacedNode("default/d1") == "edge-1");
  // The remove went to the old node before the upsert to the new one.
  std::vector<testing::FakeEdgeDispatcher::Call> calls = f.env.edge().Calls();
  REQUIRE(calls.size() == 3);
  CHECK((!calls[1].upsert && calls[1].node == "edge-0"));
  CHECK((calls[2].upsert && calls[2].node == "edge-1"));
  std::vector<Json> events = f.env.Events("d1", "NodeChanged");
  REQUIRE(events.size() == 1);
  CHECK(events[0]["type"] == "Normal");
  CHECK(kube::StringAt(events[0], "message").find("edge-0 to edge-1") != std::string::npos);
}

TEST_CASE("deleting a Dataset removes it from its node") {
  Fixture f;
  f.env.Create(Datasets(), DatasetObject("d1", "edge-0"));
  REQUIRE(Eventually([&] { return f.env.edge().Holds("edge-0", kD1); }));
  f.env.Delete(Datasets(), "default", "d1");
  REQUIRE(Eventually([&] { return !f.env.edge().Holds("edge-0", kD1); }));
  CHECK(f.controller->PlacedNode("default/d1").empty());
}

TEST_CASE("a Dataset being deleted (finalizer pending) is removed from its node") {
  Fixture f;
  Json object = DatasetObject("d1", "edge-0");
  object["metadata"]["finalizers"] = Json::array({"example.com/keep"});
  f.env.Create(Datasets(), object);
  REQUIRE(Eventually([&] { return f.env.edge().Holds("edge-0", kD1); }));
  f.env.Delete(Datasets(), "default", "d1");
  REQUIRE(Eventually([&] { return !f.env.edge().Holds("edge-0", kD1); }));
  CHECK(kube::IsBeingDeleted(f.env.Get(Datasets(), "default", "d1")));
}

TEST_CASE("an invalid spec sends nothing and says why in a condition and a Warning Event") {
  Fixture f;
  f.env.Create(Datasets(), DatasetObject("d1", "Edge_0", "data/train.txt"));
  REQUIRE(Eventually([&] { return ConditionIs(f.Status(), kSpecValidCondition, "False"); }));
  Json status = f.Status();
  std::optional<api::Condition> c = FindStatusCondition(status, kSpecValidCondition);
  REQUIRE(c.has_value());
  CHECK(c->reason == "InvalidSpec");
  CHECK(c->message.find("spec.url") != std::string::npos);
  CHECK(c->message.find("spec.nodeName") != std::string::npos);
  CHECK(status["reason"] == "InvalidSpec");
  CHECK(status["message"] == c->message);
  CHECK(status["observedGeneration"] == 1);
  CHECK(f.env.edge().Calls().empty());
  std::vector<Json> events = f.env.Events("d1", "InvalidSpec");
  REQUIRE(events.size() == 1);
  CHECK(events[0]["type"] == "Warning");
  CHECK(events[0]["message"] == c->message);
  // The status update is a change the informer sees; it must not write or warn again.
  f.WaitCached();
  const int writes = f.env.client().CountActions(Verb::kUpdateStatus);
  f.controller->Enqueue("default/d1");
  REQUIRE(Eventually([&] { return f.controller->runner().queue().Len() == 0; }));
  CHECK(f.env.client().CountActions(Verb::kUpdateStatus) == writes);

  SECTION("fixing the spec sends it and flips the condition") {
    f.env.Patch(Datasets(), "default", "d1",
                {{"spec", {{"url", "/data/train.txt"}, {"nodeName", "edge-0"}}}});
    REQUIRE(Eventually([&] { return f.env.edge().Holds("edge-0", kD1); }));
    REQUIRE(Eventually([&] { return ConditionIs(f.Status(), kSpecValidCondition, "True"); }));
    status = f.Status();
    CHECK_FALSE(status.contains("reason"));
    CHECK_FALSE(status.contains("message"));
    CHECK(status["observedGeneration"] == 2);
  }
}

TEST_CASE("a type error in the spec is reported like any invalid spec") {
  Fixture f;
  Json object = DatasetObject("d1", "edge-0");
  object["spec"]["url"] = 42;
  f.env.Create(Datasets(), object);
  REQUIRE(Eventually([&] { return ConditionIs(f.Status(), kSpecValidCondition, "False"); }));
  CHECK(f.Status()["message"].get<std::string>().find("spec.url") != std::string::npos);
  CHECK(f.env.edge().Calls().empty());
}

TEST_CASE("status writes do not resend the spec (the version is the generation)") {
  Fixture f;
  Json object = f.env.Create(Datasets(), DatasetObject("d1", "edge-0"));
  REQUIRE(Eventually([&] { return f.env.edge().Holds("edge-0", kD1); }));
  for (int i = 1; i <= 3; ++i) {
    ReportOutcome outcome = f.controller->HandleReport(
        "edge-0", CountReport(i, object, 10 * i, absl::FromUnixSeconds(1'700'000'000 + i)));
    REQUIRE(outcome.code == ReportOutcome::Code::kAccepted);
  }
  f.WaitCached();
  f.controller->Enqueue("default/d1");
  REQUIRE(Eventually([&] { return f.controller->runner().queue().Len() == 0; }));
  CHECK(f.env.edge().CountUpserts(kD1) == 1);
  CHECK(f.env.edge().Get("edge-0", kD1)->version() == "1");
}

TEST_CASE("a count report becomes numberOfSamples and updateTime through the status subresource") {
  Fixture f;
  Json object = f.env.Create(Datasets(), DatasetObject("d1", "edge-0"));
  f.WaitCached();
  const absl::Time counted_at = absl::FromUnixSeconds(1'700'000'123);
  f.env.client().ClearActions();
  ReportOutcome outcome =
      f.controller->HandleReport("edge-0", CountReport(7, object, 42, counted_at));
  CHECK(outcome.code == ReportOutcome::Code::kAccepted);
  std::vector<fakes::Action> writes = f.env.client().ActionsOf(Verb::kUpdateStatus);
  REQUIRE(writes.size() == 1);
  CHECK(writes[0].name == "d1");
  CHECK(f.env.client().CountActions(Verb::kUpdate) == 0);
  Json status = f.Status();
  CHECK(status["numberOfSamples"] == 42);
  CHECK(status["updateTime"] == "2023-11-14T22:15:23Z");
  CHECK(status["observedGeneration"] == 1);
  CHECK_FALSE(status.contains("reason"));
  std::optional<api::Condition> counted = FindStatusCondition(status, "Counted");
  REQUIRE(counted.has_value());
  CHECK(counted->status == "True");
  CHECK(counted->reason == "Counted");
  CHECK(counted->last_transition_time == f.env.clock().Now());
  std::vector<Json> events = f.env.Events("d1", "SamplesCounted");
  REQUIRE(events.size() == 1);
  CHECK(events[0]["message"] == "42 samples counted on node edge-0");

  SECTION("the same report again writes nothing") {
    f.WaitCached();
    CHECK(f.controller->HandleReport("edge-0", CountReport(8, object, 42, counted_at)).code ==
          ReportOutcome::Code::kAccepted);
    CHECK(f.env.client().CountActions(Verb::kUpdateStatus) == 1);
  }
  SECTION("0 samples is a count like any other") {
    CHECK(f.controller->HandleReport("edge-0", CountReport(8, object, 0, counted_at)).code ==
          ReportOutcome::Code::kAccepted);
    CHECK(f.Status()["numberOfSamples"] == 0);
  }
  SECTION("a report made under an older spec records that generation") {
    f.env.Patch(Datasets(), "default", "d1", {{"spec", {{"url", "/data/other.txt"}}}});
    CHECK(f.controller->HandleReport("edge-0", CountReport(8, object, 50, counted_at, "1")).code ==
          ReportOutcome::Code::kAccepted);
    CHECK(f.Status()["observedGeneration"] == 1);
    CHECK(f.controller->HandleReport("edge-0", CountReport(9, object, 51, counted_at, "2")).code ==
          ReportOutcome::Code::kAccepted);
    CHECK(f.Status()["observedGeneration"] == 2);
  }
}

TEST_CASE("a report without a count time is stamped with the GM's clock") {
  Fixture f;
  Json object = f.env.Create(Datasets(), DatasetObject("d1", "edge-0"));
  edge::v1::StatusReport report = CountReport(1, object, 5, absl::UnixEpoch());
  report.mutable_dataset()->clear_update_time();
  CHECK(f.controller->HandleReport("edge-0", report).code == ReportOutcome::Code::kAccepted);
  CHECK(f.Status()["updateTime"] == kube::FormatTimestamp(f.env.clock().Now()));
}

TEST_CASE("a conflicting status write is retried with a fresh read") {
  Fixture f;
  Json object = f.env.Create(Datasets(), DatasetObject("d1", "edge-0"));
  f.WaitCached();
  f.env.client().FailNext(Verb::kUpdateStatus, 2,
                          kube::ConflictError("datasets.sedna.io", "d1", "modified"));
  std::optional<ReportOutcome> outcome;
  std::atomic<bool> done{false};
  std::thread handler([&] {
    outcome = f.controller->HandleReport("edge-0",
                                         CountReport(1, object, 9, absl::FromUnixSeconds(1)));
    done = true;
  });
  // The cached copy's conflict and the fresh copy's are both retried at once with a fresh read,
  // never after a wait on the clock (the fake one here is not advanced).
  REQUIRE(Eventually([&] { return done.load(); }));
  handler.join();
  REQUIRE(outcome.has_value());
  CHECK(outcome->code == ReportOutcome::Code::kAccepted);
  CHECK(f.Status()["numberOfSamples"] == 9);
  CHECK(f.env.client().CountActions(Verb::kUpdateStatus) == 3);
  CHECK(f.env.client().CountActions(Verb::kGet, "datasets.sedna.io") >= 2);
}

TEST_CASE("conflicts beyond the retries and API errors answer Retry (the LC resends)") {
  Fixture f;
  Json object = f.env.Create(Datasets(), DatasetObject("d1", "edge-0"));
  f.WaitCached();
  f.env.client().FailNext(Verb::kUpdateStatus, 1, absl::UnavailableError("apiserver down"));
  ReportOutcome outcome =
      f.controller->HandleReport("edge-0", CountReport(1, object, 9, absl::FromUnixSeconds(1)));
  CHECK(outcome.code == ReportOutcome::Code::kRetry);
  CHECK(outcome.reason == "ApiError");
  CHECK_FALSE(f.Status().contains("numberOfSamples"));
}

TEST_CASE("reports about a gone or re-created Dataset are rejected as ObjectGone") {
  Fixture f;
  Json old_object = f.env.Create(Datasets(), DatasetObject("d1", "edge-0"));

  SECTION("re-created: the uid differs") {
    f.env.Delete(Datasets(), "default", "d1");
    f.env.Create(Datasets(), DatasetObject("d1", "edge-0"));
    ReportOutcome outcome =
        f.controller->HandleReport("edge-0", CountReport(1, old_object, 3, absl::FromUnixSeconds(1)));
    CHECK(outcome.code == ReportOutcome::Code::kRejected);
    CHECK(outcome.reason == "ObjectGone");
    CHECK(outcome.message.find("re-created") != std::string::npos);
    CHECK_FALSE(f.Status().contains("numberOfSamples"));
  }
  SECTION("deleted") {
    f.env.Delete(Datasets(), "default", "d1");
    ReportOutcome outcome =
        f.controller->HandleReport("edge-0", CountReport(1, old_object, 3, absl::FromUnixSeconds(1)));
    CHECK(outcome.code == ReportOutcome::Code::kRejected);
    CHECK(outcome.reason == "ObjectGone");
  }
}

TEST_CASE("a report from another node than spec.nodeName is refused") {
  Fixture f;
  Json object = f.env.Create(Datasets(), DatasetObject("d1", "edge-0"));
  REQUIRE(Eventually([&] { return f.env.edge().Holds("edge-0", kD1); }));
  ReportOutcome outcome = ReportThroughHub(f.env.edge(), *f.controller, "edge-9",
                                           CountReport(1, object, 3, absl::FromUnixSeconds(1)));
  CHECK(outcome.code == ReportOutcome::Code::kRejected);
  CHECK(outcome.reason == "NotThisNode");
  CHECK(f.env.client().CountActions(Verb::kUpdateStatus) == 0);
}

TEST_CASE("a report with another payload is rejected as Invalid") {
  Fixture f;
  Json object = f.env.Create(Datasets(), DatasetObject("d1", "edge-0"));
  edge::v1::StatusReport report = CountReport(1, object, 3, absl::FromUnixSeconds(1));
  report.mutable_model()->set_verified(true);
  ReportOutcome outcome = f.controller->HandleReport("edge-0", report);
  CHECK(outcome.code == ReportOutcome::Code::kRejected);
  CHECK(outcome.reason == "Invalid");
}

TEST_CASE("an LC error becomes a condition and is cleared by the next count") {
  Fixture f;
  Json object = f.env.Create(Datasets(), DatasetObject("d1", "edge-0", "/data/x.bin", "parquet"));
  REQUIRE(f.controller->HandleReport("edge-0", CountReport(1, object, 12, absl::FromUnixSeconds(100)))
              .code == ReportOutcome::Code::kAccepted);
  f.env.clock().Advance(absl::Minutes(1));
  REQUIRE(f.controller
              ->HandleReport("edge-0", ErrorReport(2, object, "UnknownFormat",
                                                   "format \"parquet\" is not one of txt, csv"))
              .code == ReportOutcome::Code::kAccepted);
  Json status = f.Status();
  CHECK(status["reason"] == "UnknownFormat");
  CHECK(status["message"] == "format \"parquet\" is not one of txt, csv");
  CHECK(status["numberOfSamples"] == 12);  // The last good count stays; ERROR says it is stale.
  CHECK(status["updateTime"] == kube::FormatTimestamp(absl::FromUnixSeconds(100)));
  std::optional<api::Condition> counted = FindStatusCondition(status, "Counted");
  REQUIRE(counted.has_value());
  CHECK(counted->status == "False");
  CHECK(counted->reason == "UnknownFormat");
  CHECK(counted->message == "format \"parquet\" is not one of txt, csv");
  CHECK(counted->last_transition_time == f.env.clock().Now());
  std::vector<Json> failed = f.env.Events("d1", "CountFailed");
  REQUIRE(failed.size() == 1);
  CHECK(failed[0]["type"] == "Warning");
  CHECK(status["conditions"].size() == 1);

  // The same error again: no new Event, no write.
  const int writes = f.env.client().CountActions(Verb::kUpdateStatus);
  f.WaitCached();
  REQUIRE(f.controller
              ->HandleReport("edge-0", ErrorReport(3, object, "UnknownFormat",
                                                   "format \"parquet\" is not one of txt, csv"))
              .code == ReportOutcome::Code::kAccepted);
  CHECK(f.env.client().CountActions(Verb::kUpdateStatus) == writes);

  f.env.clock().Advance(absl::Minutes(1));
  REQUIRE(f.controller->HandleReport("edge-0", CountReport(4, object, 30, absl::FromUnixSeconds(300)))
              .code == ReportOutcome::Code::kAccepted);
  status = f.Status();
  CHECK_FALSE(status.contains("reason"));
  CHECK_FALSE(status.contains("message"));
  CHECK(status["numberOfSamples"] == 30);
  counted = FindStatusCondition(status, "Counted");
  REQUIRE(counted.has_value());
  CHECK(counted->status == "True");
  CHECK(counted->last_transition_time == f.env.clock().Now());
  CHECK(status["conditions"].size() == 1);  // One per type: bounded.
  CHECK(f.env.Events("d1", "CountRecovered").size() == 1);
  CHECK(f.env.Events("d1", "CountFailed").size() == 1);
}

TEST_CASE("reconcile metrics count each reconcile by controller and result") {
  Fixture f;
  f.env.Create(Datasets(), DatasetObject("d1", "edge-0"));
  REQUIRE(Eventually([&] { return f.env.edge().Holds("edge-0", kD1); }));
  REQUIRE(Eventually([&] {
    return f.env.metrics().ReconcileCount("dataset", ControllerMetrics::ReconcileResult::kSuccess) >=
           1;
  }));
  CHECK(f.env.metrics().ReconcileCount("dataset", ControllerMetrics::ReconcileResult::kError) == 0);
}

}  // namespace
}  // namespace nereid::gm
