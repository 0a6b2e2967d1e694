#include "common/api/common_types.h"

#include <catch2/catch.hpp>

#include "common/api/sedna_contract.h"
#include "common/api/validation.h"

namespace nereid::api {
namespace {

using kube::Json;

const absl::Time kT0 = absl::FromUnixSeconds(1714557600);

Condition Cond(std::string type, std::string stage, std::string reason = "",
               std::string message = "", std::string data = "") {
  Condition c;
  c.type = std::move(type);
  c.stage = std::move(stage);
  c.reason = std::move(reason);
  c.message = std::move(message);
  c.data = std::move(data);
  return c;
}

TEST_CASE("AppendCondition appends transitions and keeps the list bounded") {
  std::vector<Condition> conds;
  for (int i = 0; i < 25; ++i) {
    Condition c;
    c.type = (i % 2 == 0) ? "Waiting" : "Ready";
    c.stage = "Train";
    c.message = "round " + std::to_string(i);
    CHECK(AppendCondition(&conds, c, kT0 + absl::Seconds(i)));
  }
  REQUIRE(conds.size() == kMaxConditions);
  // The newest survive, oldest first.
  CHECK(conds.back().message == "round 24");
  CHECK(conds.front().message == "round 15");
  CHECK(conds.back().last_transition_time == kT0 + absl::Seconds(24));
  CHECK(conds.back().last_heartbeat_time == kT0 + absl::Seconds(24));
  CHECK(LatestCondition(conds) == &conds.back());
  CHECK(LatestCondition({}) == nullptr);
}

TEST_CASE("AppendCondition updates the latest condition in place for the same state") {
  std::vector<Condition> conds;
  Condition running = Cond("Running", "", "WorkersAvailable", "2 of 2");
  REQUIRE(AppendCondition(&conds, running, kT0));

  // Same state and same text: no change at all (no status write per reconcile).
  CHECK_FALSE(AppendCondition(&conds, running, kT0 + absl::Minutes(1)));
  CHECK(conds.size() == 1);
  CHECK(conds[0].last_heartbeat_time == kT0);

  // Same state, new message: updated in place, transition time kept.
  running.message = "2 of 2, 3 replicas";
  CHECK(AppendCondition(&conds, running, kT0 + absl::Minutes(2)));
  REQUIRE(conds.size() == 1);
  CHECK(conds[0].message == "2 of 2, 3 replicas");
  CHECK(conds[0].last_transition_time == kT0);
  CHECK(conds[0].last_heartbeat_time == kT0 + absl::Minutes(2));

  // Another stage is another state even with the same type.
  Condition a = Cond("Waiting", "Train");
  Condition b = Cond("Waiting", "Eval");
  CHECK(AppendCondition(&conds, a, kT0));
  CHECK(AppendCondition(&conds, b, kT0));
  CHECK(conds.size() == 3);

  // A cap of zero still keeps the latest.
  std::vector<Condition> tiny;
  AppendCondition(&tiny, a, kT0, 0);
  AppendCondition(&tiny, b, kT0, 0);
  REQUIRE(tiny.size() == 1);
  CHECK(tiny[0].stage == "Eval");
}

TEST_CASE("Condition JSON writes only the fields that are set") {
  Condition c = Cond("Ready", "Eval", "", "", "{\"input\":{}}");
  c.last_transition_time = kT0;
  Json j = c.ToJson();
  CHECK(j == Json::parse(R"({"type": "Ready", "status": "True", "stage": "Eval",
                             "lastTransitionTime": "2024-05-01T10:00:00Z",
                             "data": "{\"input\":{}}"})"));
  FieldReader r;
  Json status = {{"conditions", Json::array({j})}};
  std::vector<Condition> back = ReadConditions(status, "status", &r);
  REQUIRE(r.ok());
  REQUIRE(back.size() == 1);
  CHECK(back[0] == c);
}

TEST_CASE("time of day and trigger operators follow Sedna") {
  for (const char* ok : {"00:00", "02:00", "23:59", "12:30", "24:00"}) {
    CAPTURE(ok);
    CHECK(IsTimeOfDay(ok));
  }
  for (const char* bad :
       {"", "2:00", "24:01", "25:00", "12:60", "12-30", "12:3", "1200", "ab:cd", " 12:30"}) {
    CAPTURE(bad);
    CHECK_FALSE(IsTimeOfDay(bad));
  }
  for (const char* op :
       {">", ">=", "=", "==", "!=", "<", "<=", "gt", "ge", "eq", "ne", "lt", "le"}) {
    CAPTURE(op);
    CHECK(IsTriggerOperator(op));
  }
  for (const char* op : {"", "=>", "GT", "<>", "~", "greater"}) {
    CAPTURE(op);
    CHECK_FALSE(IsTriggerOperator(op));
  }
  Trigger t;
  CHECK(t.CheckPeriodSeconds() == kDefaultCheckPeriodSeconds);
  t.check_period_seconds = 15;
  CHECK(t.CheckPeriodSeconds() == 15);
}

TEST_CASE("the Sedna label scheme, child names and resources") {
  CHECK(LabelKeyName(kinds::kFederatedLearningJob) == "federatedlearningjob.sedna.io/name");
  CHECK(LabelKeyUid(kinds::kJointInferenceService) == "jointinferenceservice.sedna.io/uid");
  CHECK(LabelKeyWorkerType(kinds::kIncrementalLearningJob) ==
        "incrementallearningjob.sedna.io/worker-type");
  auto labels = WorkerLabels(kinds::kFederatedLearningJob, "fl1", "u-1", "Aggregation");
  CHECK(labels == std::map<std::string, std::string>{
                      {"federatedlearningjob.sedna.io/name", "fl1"},
                      {"federatedlearningjob.sedna.io/uid", "u-1"},
                      {"federatedlearningjob.sedna.io/worker-type", "aggregation"}});
  CHECK(SelectorLabels(kinds::kJointInferenceService, "ji", "u").size() == 2);
  CHECK(DeploymentName("ji", worker_types::kEdge) == "ji-deployment-edge");
  CHECK(ServiceName("ji", worker_types::kCloud) == "ji-cloud");
  CHECK(ServiceName("fl", worker_types::kAggregation) == "fl-aggregation");
  CHECK(PodGenerateName("il", worker_types::kTrain) == "il-train-");
  CHECK(HpaName("ji-deployment-edge") == "hpa-ji-deployment-edge");
  CHECK(AppLabelValue("ji", "Cloud") == "ji-cloud-svc");
  CHECK(StageNodeAnnotation(stages::kTrain) == "sedna.io/Train");
  CHECK(LowerKind(kinds::kLifelongLearningJob) == "lifelonglearningjob");

  REQUIRE(resources::All().size() == 11);
  CHECK(resources::ForKind("ObjectTrackingService") == &resources::ObjectTrackingServices());
  CHECK(resources::FeatureExtractionServices().QualifiedName() ==
        "featureextractionservices.sedna.io");
  CHECK(DeploymentName("fe", worker_types::kFeatureExtraction) == "fe-deployment-fe");
  CHECK(ServiceName("objs", worker_types::kReidWorker) == "objs-reidworker");
  CHECK(PodGenerateName("objs", worker_types::kTrackingWorker) == "objs-trackingworker-");
  CHECK(resources::Datasets().ObjectPath("ns", "d1", "status") ==
        "/apis/sedna.io/v1alpha1/namespaces/ns/datasets/d1/status");
  CHECK(resources::JointInferenceServices().QualifiedName() == "jointinferenceservices.sedna.io");
  CHECK(resources::ForKind("LifelongLearningJob") == &resources::LifelongLearningJobs());
  CHECK(resources::ForKind("Pod") == nullptr);
  for (const kube::Resource* r : resources::All()) {
    CHECK(r->ApiVersion() == "sedna.io/v1alpha1");
    CHECK(r->namespaced);
  }
  CHECK(ports::kLocalController == 9100);
  CHECK(env::kHemParameters == "HEM_PARAMETERS");
}

TEST_CASE("DNS names and locations") {
  CHECK(IsDnsSubdomain("edge-0"));
  CHECK(IsDnsSubdomain("a.b-c.d"));
  CHECK_FALSE(IsDnsSubdomain(""));
  CHECK_FALSE(IsDnsSubdomain("Edge-0"));
  CHECK_FALSE(IsDnsSubdomain("edge_0"));
  CHECK_FALSE(IsDnsSubdomain("-edge"));
  CHECK_FALSE(IsDnsSubdomain("edge."));
  CHECK_FALSE(IsDnsSubdomain(std::string(254, 'a')));

  auto check = [](std::string_view url) {
    Causes out;
    ValidateLocation(url, "spec.url", "the url", {"s3", "http", "https"}, &out);
    return out;
  };
  CHECK(check("/data/x.txt").empty());
  CHECK(check("s3://bucket/key").empty());
  CHECK(check("https://host/x").empty());
  REQUIRE(check("").size() == 1);
  CHECK(check("")[0].reason == "FieldValueRequired");
  CHECK(check("data/x.txt")[0].reason == "FieldValueInvalid");
  CHECK(check("ftp://host/x")[0].reason == "FieldValueNotSupported");
  CHECK(check("s3://")[0].reason == "FieldValueInvalid");
  CHECK(check("/data/../etc/passwd")[0].reason == "FieldValueInvalid");
}

TEST_CASE("FormatCauses and InvalidObjectError read like the API server") {
  Causes causes = {{"FieldValueRequired", "the dataset url is required", "spec.url"},
                   {"FieldValueInvalid", "bad", "spec.nodeName"}};
  CHECK(FormatCauses(causes) == "spec.url: the dataset url is required; spec.nodeName: bad");
  absl::Status s = InvalidObjectError("Dataset", "d1", causes);
  CHECK(kube::IsInvalid(s));
  CHECK(std::string(s.message()) ==
        "Dataset.sedna.io \"d1\" is invalid: spec.url: the dataset url is required, "
        "spec.nodeName: bad");
  REQUIRE(kube::Causes(s).size() == 2);
  CHECK(kube::Causes(s)[1].field == "spec.nodeName");
}

}  // namespace
}  // namespace nereid::api
