#include "localcontroller/worker/worker_intake.h"

#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "common/net/edge_protocol.h"
#include "common/time/fake_clock.h"
#include "localcontroller/worker/message_content.h"
#include "nlohmann/json.hpp"

namespace nereid::lc::worker {
namespace {

using Json = nlohmann::json;

class FakeSink final : public ReportSink {
 public:
  absl::Status Enqueue(edge::v1::StatusReport report) override {
    absl::MutexLock lock(&mu_);
    if (!fail_.ok()) return fail_;
    reports_.push_back(std::move(report));
    return absl::OkStatus();
  }
  void Fail(absl::Status status) {
    absl::MutexLock lock(&mu_);
    fail_ = std::move(status);
  }
  std::vector<edge::v1::StatusReport> reports() {
    absl::MutexLock lock(&mu_);
    return reports_;
  }

 private:
  absl::Mutex mu_;
  absl::Status fail_ ABSL_GUARDED_BY(mu_);
  std::vector<edge::v1::StatusReport> reports_ ABSL_GUARDED_BY(mu_);
};

struct Fixture {
  FakeClock clock;
  FakeSink sink;
  WorkerIntake intake;
  explicit Fixture(size_t max_workers = 256, size_t max_detail = 8 << 10)
      : intake(WorkerIntake::Options{&sink, &clock, max_workers, max_detail}) {}
};

// What the Sedna SDK's JointInference LCReporter posts (lib/sedna/core/joint_inference).
Json JointInferenceBody(const std::string& worker) {
  return {{"name", worker},
          {"namespace", "default"},
          {"ownerName", "helmet-detection"},
          {"ownerKind", "jointinferenceservice"},
          {"kind", "inference"},
          {"status", "running"},
          {"ownerInfo",
           {{"startTime", "2024-05-01 10:00:00"},
            {"updateTime", "2024-05-01 10:00:30"},
            {"inferenceNumber", 120},
            {"hardExampleNumber", 7},
            {"uploadCloudRatio", 0.0583}}},
          {"results", Json::array()}};
}

// What a FederatedLearning training worker posts per round.
Json FederatedBody(const std::string& worker) {
  return {{"name", worker},
          {"namespace", "sedna"},
          {"ownerName", "surface-defect"},
          {"ownerKind", "federatedlearningjob"},
          {"kind", "train"},
          {"status", "completed"},
          {"ownerInfo", {{"currentRound", 3}, {"sampleCount", 500}}},
          {"results",
           {{{"format", "pb"},
             {"url", "/model/model.pb"},
             {"metrics", {{"accuracy", {0.91}}}}}}}};
}

TEST_CASE("a Sedna worker report is accepted and mapped to a WorkerReport about its owner",
          "[lc][worker]") {
  Fixture f;
  IntakeReply reply = f.intake.Submit("edgeworker-abcde", JointInferenceBody("edgeworker-abcde").dump());
  CHECK(reply.status == 200);
  CHECK(reply.message == "OK");

  std::vector<edge::v1::StatusReport> reports = f.sink.reports();
  REQUIRE(reports.size() == 1);
  const edge::v1::StatusReport& r = reports[0];
  CHECK(r.ref().kind() == "JointInferenceService");
  CHECK(r.ref().namespace_() == "default");
  CHECK(r.ref().name() == "helmet-detection");
  REQUIRE(r.has_worker());
  CHECK(r.worker().worker_name() == "edgeworker-abcde");
  CHECK(r.worker().worker_kind() == "inference");
  CHECK(r.worker().status() == "running");
  CHECK(Json::parse(r.worker().owner_info_json()) == JointInferenceBody("x")["ownerInfo"]);
  CHECK(r.worker().results_json() == "[]");
  CHECK(nereid::net::FromProtoTime(r.worker().time()) == f.clock.Now());

  reply = f.intake.Submit("trainworker-1", FederatedBody("trainworker-1").dump());
  CHECK(reply.status == 200);
  reports = f.sink.reports();
  REQUIRE(reports.size() == 2);
  CHECK(reports[1].ref().kind() == "FederatedLearningJob");
  CHECK(reports[1].ref().namespace_() == "sedna");
  CHECK(Json::parse(reports[1].worker().results_json()) == FederatedBody("x")["results"]);

  WorkerIntake::Stats stats = f.intake.stats();
  CHECK(stats.received == 2);
  CHECK(stats.forwarded == 2);
  CHECK(stats.invalid == 0);
}

// What the multi-edge inference workers post: Sedna's video analytics, ReID and feature
// extraction workers name their owner in lower case, like the others.
Json MultiEdgeBody(const std::string& worker, const std::string& owner_kind) {
  return {{"name", worker},
          {"namespace", "default"},
          {"ownerName", "pedestrian"},
          {"ownerKind", owner_kind},
          {"kind", "inference"},
          {"status", "running"},
          {"ownerInfo", {{"startTime", "2024-05-01 10:00:00"}, {"framesProcessed", 42}}},
          {"results", Json::array()}};
}

TEST_CASE("multi-edge inference workers' reports reach their owner kind", "[lc][worker]") {
  const std::pair<std::string, std::string> owners[] = {
      {"videoanalyticsjob", "VideoAnalyticsJob"},
      {"reidjob", "ReidJob"},
      {"featureextractionservice", "FeatureExtractionService"}};
  Fixture f;
  for (const auto& [owner_kind, kind] : owners) {
    INFO(owner_kind);
    const std::string worker = owner_kind + "-worker";
    IntakeReply reply = f.intake.Submit(worker, MultiEdgeBody(worker, owner_kind).dump());
    CHECK(reply.status == 200);
    std::vector<edge::v1::StatusReport> reports = f.sink.reports();
    REQUIRE_FALSE(reports.empty());
    const edge::v1::StatusReport& r = reports.back();
    CHECK(r.ref().kind() == kind);
    CHECK(r.ref().namespace_() == "default");
    CHECK(r.ref().name() == "pedestrian");
    REQUIRE(r.has_worker());
    CHECK(r.worker().worker_name() == worker);
    CHECK(Json::parse(r.worker().owner_info_json()) == MultiEdgeBody("x", owner_kind)["ownerInfo"]);
  }
  CHECK(f.sink.reports().size() == 3);
  CHECK(f.intake.stats().forwarded == 3);
  CHECK(f.intake.stats().unknown_owner_kind == 0);
  CHECK(OwnerKindToKind("FeatureExtractionService") == "FeatureExtractionService");
  CHECK(OwnerKindToKind("VIDEOANALYTICSJOB") == "VideoAnalyticsJob");
}

TEST_CASE("owner kinds map case-insensitively; unknown ones are accepted but not forwarded",
          "[lc][worker]") {
  CHECK(OwnerKindToKind("incrementallearningjob") == "IncrementalLearningJob");
  CHECK(OwnerKindToKind("LifelongLearningJob") == "LifelongLearningJob");
  CHECK(OwnerKindToKind("objectsearchservice").empty());
  CHECK(OwnerKindToKind("").empty());

  Fixture f;
  Json body = JointInferenceBody("w1");
  body["ownerKind"] = "objectsearchservice";
  IntakeReply reply = f.intake.Submit("w1", body.dump());
  CHECK(reply.status == 200);  // as Sedna's LC: silently accepted
  CHECK(f.sink.reports().empty());
  CHECK(f.intake.stats().unknown_owner_kind == 1);
  std::vector<WorkerRecord> workers = f.intake.Workers();
  REQUIRE(workers.size() == 1);
  CHECK_FALSE(workers[0].forwarded);
  CHECK(workers[0].owner_kind == "objectsearchservice");
}

TEST_CASE("bad worker reports get Sedna's 400 and nothing is stored", "[lc][worker]") {
  Fixture f;
  struct Case {
    std::string worker;
    std::string body;
    std::string message_part;
  };
  Json wrong_name = JointInferenceBody("other");
  Json number_name = JointInferenceBody("w1");
  number_name["name"] = 7;
  Json info_array = JointInferenceBody("w1");
  info_array["ownerInfo"] = Json::array({1});
  Json results_object = JointInferenceBody("w1");
  results_object["results"] = Json::object();
  Json results_string = JointInferenceBody("w1");
  results_string["results"] = Json::array({"x"});
  Json no_namespace = JointInferenceBody("w1");
  no_namespace.erase("namespace");
  const std::vector<Case> cases = {
      {"w1", wrong_name.dump(),
       "worker name(name=w1) in the api is different from that(name=other) in the message body"},
      {"w1", "{not json", "read worker(name=w1) message body failed"},
      {"w1", "", "not valid JSON"},
      {"w1", "[1,2]", "must be a JSON object"},
      {"w1", number_name.dump(), "\"name\" must be a string"},
      {"w1", info_array.dump(), "\"ownerInfo\" must be an object"},
      {"w1", results_object.dump(), "\"results\" must be an array"},
      {"w1", results_string.dump(), "\"results\"[0] must be an object"},
      {"w1", no_namespace.dump(), "needs \"namespace\" and \"ownerName\""},
  };
  for (const Case& c : cases) {
    INFO(c.body);
    IntakeReply reply = f.intake.Submit(c.worker, c.body);
    CHECK(reply.status == 400);
    CHECK_THAT(reply.message, Catch::Contains(c.message_part));
  }
  CHECK(f.sink.reports().empty());
  CHECK(f.intake.Workers().empty());
  CHECK(f.intake.stats().invalid == cases.size());
}

// Found by fuzzing (tests/fuzz/worker_report): 400,000 nested arrays in ownerInfo overflowed the
// stack when the intake serialized ownerInfo again. Now anything nested deeper than 100 levels is
// refused before that.
TEST_CASE("deeply nested reports are refused before they are serialized", "[lc][worker]") {
  Fixture f;
  auto nested = [](int levels) {
    return R"({"name":"w1","namespace":"default","ownerName":"ji",)"
           R"("ownerKind":"jointinferenceservice","ownerInfo":{"a":)" +
           std::string(levels, '[') + std::string(levels, ']') + "}}";
  };
  IntakeReply deep = f.intake.Submit("w1", nested(400'000));
  CHECK(deep.status == 400);
  CHECK_THAT(deep.message, Catch::Contains("nested deeper than 100 levels"));
  CHECK(f.intake.Submit("w1", nested(101)).status == 400);
  CHECK(f.intake.Submit("w1", nested(98)).status == 200);  // + the body and ownerInfo objects
  CHECK(f.sink.reports().size() == 1);
}

TEST_CASE("nulls and missing optional fields are empty, as Go decodes them", "[lc][worker]") {
  Fixture f;
  Json body = {{"name", "w1"},          {"namespace", "default"}, {"ownerName", "ji"},
               {"ownerKind", "jointinferenceservice"}, {"kind", nullptr}, {"ownerInfo", nullptr},
               {"results", nullptr},    {"extra", {1, 2, 3}}};
  CHECK(f.intake.Submit("w1", body.dump()).status == 200);
  std::vector<edge::v1::StatusReport> reports = f.sink.reports();
  REQUIRE(reports.size() == 1);
  CHECK(reports[0].worker().worker_kind().empty());
  CHECK(reports[0].worker().results_json().empty());
  CHECK(reports[0].worker().owner_info_json().empty());
}

TEST_CASE("a storage failure answers 500 and keeps nothing", "[lc][worker]") {
  Fixture f;
  f.sink.Fail(absl::UnavailableError("disk full"));
  IntakeReply reply = f.intake.Submit("w1", JointInferenceBody("w1").dump());
  CHECK(reply.status == 500);
  CHECK_THAT(reply.message, Catch::Contains("disk full"));
  CHECK(f.intake.stats().failed == 1);
  CHECK(f.intake.Workers().empty());
}

TEST_CASE("the worker table keeps the latest report per worker, bounded", "[lc][worker]") {
  Fixture f(/*max_workers=*/3, /*max_detail=*/256);
  for (int round = 0; round < 2; ++round) {
    Json body = FederatedBody("w0");
    body["ownerInfo"]["currentRound"] = round;
    REQUIRE(f.intake.Submit("w0", body.dump()).status == 200);
    f.clock.Advance(absl::Seconds(1));
  }
  std::vector<WorkerRecord> workers = f.intake.Workers();
  REQUIRE(workers.size() == 1);
  CHECK(workers[0].reports == 2);
  CHECK(Json::parse(workers[0].owner_info_json)["currentRound"] == 1);

  for (int i = 1; i <= 4; ++i) {
    const std::string name = "w" + std::to_string(i);
    REQUIRE(f.intake.Submit(name, FederatedBody(name).dump()).status == 200);
    f.clock.Advance(absl::Seconds(1));
  }
  workers = f.intake.Workers();
  REQUIRE(workers.size() == 3);
  CHECK(workers[0].name == "w4");  // most recent first
  CHECK(workers[1].name == "w3");
  CHECK(workers[2].name == "w2");

  Json big = FederatedBody("w5");
  big["ownerInfo"]["blob"] = std::string(1000, 'x');
  REQUIRE(f.intake.Submit("w5", big.dump()).status == 200);
  workers = f.intake.Workers();
  CHECK(workers[0].details_truncated);
  CHECK(workers[0].owner_info_json.empty());
  // The outbox still gets the whole report.
  CHECK(f.sink.reports().back().worker().owner_info_json().size() > 1000);
}

}  // namespace
}  // namespace nereid::lc::worker
