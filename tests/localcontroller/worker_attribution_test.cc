#include "localcontroller/worker_attribution.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/net/edge_protocol.h"
#include "localcontroller/cloudlink/lc_db_adapter.h"
#include "localcontroller/worker/worker_intake.h"
#include "localcontroller/worker_report_sink.h"
#include "nlohmann/json.hpp"
#include "tests/localcontroller/db/test_util.h"

namespace nereid::lc {
namespace {

using Json = nlohmann::json;
using db::testing::MakeOptions;
using db::testing::OpenOrDie;
using db::testing::TempDir;
namespace v1 = edge::v1;

// What the GM placed on the node, stored as the cloud link stores it.
void Place(db::LcDatabase& database, v1::Resource resource) {
  REQUIRE(database.Upsert(ToDbRef(resource.ref()), "1", resource.SerializeAsString()).ok());
}

v1::Resource Object(std::string_view kind, std::string_view name) {
  v1::Resource r;
  r.mutable_ref()->set_kind(std::string(kind));
  r.mutable_ref()->set_namespace_("default");
  r.mutable_ref()->set_name(std::string(name));
  r.mutable_ref()->set_uid(absl::StrCat("uid-", std::string(name)));
  if (kind == net::kKindFederatedLearningJob) r.mutable_federated_learning_job();
  if (kind == net::kKindJointInferenceService) r.mutable_joint_inference_service();
  return r;
}

// What the Sedna SDK's FederatedLearning posts each round: its kind is never set.
Json FlRound(const std::string& worker, const std::string& owner_kind = "default") {
  return {{"name", worker},
          {"namespace", "default"},
          {"ownerName", "fl-demo"},
          {"ownerKind", owner_kind},
          {"kind", "train"},
          {"status", "running"},
          {"ownerInfo", {{"currentRound", 2}, {"sampleCount", 30}}},
          {"results", Json::array({{{"format", "pb"}, {"metrics", {{"acc", 0.9}}}}})}};
}

std::vector<v1::StatusReport> Outbox(db::LcDatabase& database) {
  absl::StatusOr<std::vector<db::OutboxEntry>> pending = database.Pending(100);
  REQUIRE(pending.ok());
  std::vector<v1::StatusReport> out;
  for (const db::OutboxEntry& e : *pending) {
    absl::StatusOr<v1::StatusReport> r = DecodeReport(e);
    REQUIRE(r.ok());
    out.push_back(*r);
  }
  return out;
}

TEST_CASE("a report of owner kind \"default\" goes to the job the GM placed under its name") {
  TempDir dir;
  auto database = OpenOrDie(MakeOptions(dir.File("lc.db")));
  WorkerReportSink sink(database.get());
  worker::WorkerIntake intake({.sink = &sink});

  // Nothing placed yet: accepted (200, as Sedna's LC), not forwarded.
  worker::IntakeReply reply = intake.Submit("fl-demo-train-0-0", FlRound("fl-demo-train-0-0").dump());
  CHECK(reply.status == 200);
  CHECK(Outbox(*database).empty());
  CHECK(intake.stats().unknown_owner_kind == 1);

  Place(*database, Object(net::kKindFederatedLearningJob, "fl-demo"));
  Place(*database, Object(net::kKindJointInferenceService, "other"));
  reply = intake.Submit("fl-demo-train-0-0", FlRound("fl-demo-train-0-0").dump());
  CHECK(reply.status == 200);
  std::vector<v1::StatusReport> sent = Outbox(*database);
  REQUIRE(sent.size() == 1);
  CHECK(sent[0].ref().kind() == "FederatedLearningJob");
  CHECK(sent[0].ref().name() == "fl-demo");
  CHECK(sent[0].ref().uid() == "uid-fl-demo");  // stamped: the node holds it
  CHECK(sent[0].worker().worker_name() == "fl-demo-train-0-0");
  CHECK(Json::parse(sent[0].worker().owner_info_json())["currentRound"] == 2);
  CHECK(intake.stats().attributed == 1);
  std::vector<worker::WorkerRecord> workers = intake.Workers();
  REQUIRE_FALSE(workers.empty());
  CHECK(workers[0].owner_kind == "default");  // as the worker sent it
  CHECK(workers[0].attributed_kind == "FederatedLearningJob");

  SECTION("a missing ownerKind is attributed the same way") {
    Json body = FlRound("fl-demo-train-1-0");
    body.erase("ownerKind");
    CHECK(intake.Submit("fl-demo-train-1-0", body.dump()).status == 200);
    CHECK(Outbox(*database).size() == 2);
  }
  SECTION("an unknown kind that is not the SDK's default stays unforwarded") {
    CHECK(intake.Submit("w", FlRound("w", "objectsearchservice").dump()).status == 200);
    CHECK(Outbox(*database).size() == 1);
  }
  SECTION("two placed kinds under the name: not guessed") {
    Place(*database, Object(net::kKindJointInferenceService, "fl-demo"));
    absl::StatusOr<worker::ReportOwner> owner = sink.AttributeWorker("default", "w", "fl-demo");
    CHECK(absl::IsNotFound(owner.status()));
    CHECK(owner.status().message().find("several") != std::string_view::npos);
  }
  SECTION("another namespace holds nothing of that name") {
    CHECK(absl::IsNotFound(sink.AttributeWorker("prod", "w", "fl-demo").status()));
  }
}

TEST_CASE("a placed Worker object names its owner, whatever the report claims") {
  TempDir dir;
  auto database = OpenOrDie(MakeOptions(dir.File("lc.db")));
  v1::Resource placed = Object(net::kKindWorker, "trackingworker-x7k2p");
  placed.mutable_worker()->set_job_kind("FeatureExtractionService");
  placed.mutable_worker()->set_job_name("pedestrian");
  Place(*database, placed);
  absl::StatusOr<worker::ReportOwner> owner = absl::NotFoundError("not read");
  REQUIRE(database
              ->Read([&](db::LcDatabase::Tables& tables) {
                owner = AttributeWorker(tables, "default", "trackingworker-x7k2p", "sedna");
                return absl::OkStatus();
              })
              .ok());
  REQUIRE(owner.ok());
  CHECK(owner->kind == "FeatureExtractionService");
  CHECK(owner->name == "pedestrian");
}

TEST_CASE("which owner kinds are left to attribution") {
  CHECK(worker::NeedsAttribution(""));
  CHECK(worker::NeedsAttribution("default"));
  CHECK(worker::NeedsAttribution("DEFAULT"));
  CHECK(worker::NeedsAttribution("multiedgetrackingservice"));
  CHECK_FALSE(worker::NeedsAttribution("federatedlearningjob"));
  CHECK_FALSE(worker::NeedsAttribution("objectsearchservice"));
}

}  // namespace
}  // namespace nereid::lc
