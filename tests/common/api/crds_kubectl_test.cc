// Integration: the CRDs and examples applied with the real kubectl to devapiserver (which enforces
// CRD schemas the way the API server does), status written through the status subresource from the
// typed kinds, and what comes back parsed again.

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "common/api/dataset.h"
#include "common/api/federated_learning_job.h"
#include "common/api/incremental_learning_job.h"
#include "common/api/joint_inference_service.h"
#include "common/api/lifelong_learning_job.h"
#include "common/api/model.h"
#include "common/api/sedna_contract.h"
#include "tests/support/devapiserver_process.h"
#include "tests/support/subprocess.h"

namespace nereid::api {
namespace {

using kube::Json;
using nereid::testing::CommandResult;

const std::string kSourceDir = NEREID_SOURCE_DIR;

nereid::testing::DevApiServerProcess::Options ApiOptions() {
  nereid::testing::DevApiServerProcess::Options options;
  options.devapiserver = NEREID_DEVAPISERVER_BIN;
  options.kubectl = NEREID_KUBECTL;
  options.source_dir = kSourceDir;
  options.temp_prefix = "nereid-api-kubectl";
  options.kubectl_timeout = absl::Seconds(60);
  return options;
}

class Cluster {
 public:
  Cluster() : api_(ApiOptions()) {}

  CommandResult Kubectl(std::vector<std::string> args, std::string_view stdin_data = "") {
    return api_.Kubectl(args, stdin_data);
  }
  std::string Ok(std::vector<std::string> args, std::string_view stdin_data = "") {
    return api_.KubectlOk(args, stdin_data);
  }
  Json Get(const std::string& resource, const std::string& name) {
    Json doc = Json::parse(Ok({"get", resource, name, "-o", "json"}), nullptr, false);
    REQUIRE(doc.is_object());
    return doc;
  }
  // Writes `status` through the status subresource.
  void PutStatus(const std::string& resource, const std::string& name, const Json& status) {
    Ok({"patch", resource, name, "--subresource=status", "--type=merge", "-p",
        Json{{"status", status}}.dump()});
  }

 private:
  nereid::testing::DevApiServerProcess api_;
};

absl::Time Now() { return absl::FromUnixSeconds(1779000000); }

template <typename Kind>
Kind Parse(const Json& doc) {
  auto parsed = Kind::FromJson(doc);
  INFO((parsed.ok() ? std::string() : std::string(parsed.status().message())));
  REQUIRE(parsed.ok());
  return *std::move(parsed);
}

TEST_CASE("CRDs and examples apply with kubectl; typed status survives the round trip") {
  Cluster cluster;
  std::string crds = cluster.Ok({"apply", "-f", kSourceDir + "/deploy/crds/"});
  CHECK(crds.find("datasets.sedna.io created") != std::string::npos);
  CHECK(crds.find("lifelonglearningjobs.sedna.io created") != std::string::npos);
  std::string examples = cluster.Ok({"apply", "-f", kSourceDir + "/examples/"});
  CHECK(examples.find("jointinferenceservice.sedna.io/helmet-detection-inference created") !=
        std::string::npos);

  // Short names and the category.
  std::string short_names = cluster.Ok({"get", "ji,fl,il,ll", "-o", "name"});
  CHECK(short_names.find("federatedlearningjob.sedna.io/surface-defect-detection") !=
        std::string::npos);
  std::string all = cluster.Ok({"get", "sedna"});
  for (const char* column : {"NODE", "SAMPLES", "VERIFIED", "PHASE", "ROUND", "STAGE", "ROUNDS"}) {
    CAPTURE(column);
    CHECK(all.find(column) != std::string::npos);
  }

  // Status written from the typed kinds is kept field for field (nothing pruned).
  SECTION("Dataset") {
    Dataset d = Parse<Dataset>(cluster.Get("datasets", "helmet-detection-dataset"));
    d.status.number_of_samples = 10;
    d.status.update_time = Now();
    d.status.observed_generation = d.metadata.generation;
    cluster.PutStatus("datasets", "helmet-detection-dataset", d.StatusToJson());
    Dataset back = Parse<Dataset>(cluster.Get("datasets", "helmet-detection-dataset"));
    CHECK(back.status == d.status);
    CHECK(back.spec == d.spec);
    // The printer columns: NAME NODE FORMAT SAMPLES (ERROR empty) AGE.
    std::string table = cluster.Ok({"get", "datasets", "helmet-detection-dataset", "--no-headers"});
    std::vector<std::string> cells = absl::StrSplit(table, ' ', absl::SkipWhitespace());
    REQUIRE(cells.size() >= 4);
    CHECK(cells[1] == "edge-0");
    CHECK(cells[2] == "txt");
    CHECK(cells[3] == "10");
  }
  SECTION("Model") {
    Model m = Parse<Model>(cluster.Get("models", "helmet-detection-little-model"));
    m.status.verified = true;
    m.status.sha256 = m.spec.sha256;
    m.status.metrics = {{"precision", "0.9"}};
    cluster.PutStatus("models", "helmet-detection-little-model", m.StatusToJson());
    CHECK(Parse<Model>(cluster.Get("models", "helmet-detection-little-model")).status == m.status);
  }
  SECTION("JointInferenceService") {
    auto s = Parse<JointInferenceService>(cluster.Get("ji", "helmet-detection-inference"));
    Condition running;
    running.type = "Running";
    running.reason = "WorkersAvailable";
    running.message = "both workers are available";
    AppendCondition(&s.status.conditions, running, Now());
    s.status.phase = "Running";
    s.status.active = 2;
    s.status.start_time = Now();
    s.status.metrics = {{"inferenceNumber", "42"}};
    cluster.PutStatus("ji", "helmet-detection-inference", s.StatusToJson());
    auto back = Parse<JointInferenceService>(cluster.Get("ji", "helmet-detection-inference"));
    CHECK(back.status == s.status);
    CHECK(back.spec == s.spec);
  }
  SECTION("FederatedLearningJob") {
    auto j = Parse<FederatedLearningJob>(cluster.Get("fl", "surface-defect-detection"));
    Condition training;
    training.type = "Training";
    training.message = "round 3";
    training.last_probe_time = Now();
    AppendCondition(&j.status.conditions, training, Now());
    j.status.phase = "Running";
    j.status.active = 3;
    j.status.current_round = 3;
    cluster.PutStatus("fl", "surface-defect-detection", j.StatusToJson());
    CHECK(Parse<FederatedLearningJob>(cluster.Get("fl", "surface-defect-detection")).status ==
          j.status);
  }
  SECTION("IncrementalLearningJob: bounded conditions") {
    auto j = Parse<IncrementalLearningJob>(cluster.Get("il", "helmet-detection-incremental"));
    for (int i = 0; i < 3 * static_cast<int>(kMaxConditions); ++i) {
      Condition c;
      c.type = i % 2 == 0 ? "Waiting" : "Ready";
      c.stage = "Train";
      c.data = R"({"input":{"outputDir":"/data/output/helmet_detection/train/1"}})";
      AppendCondition(&j.status.conditions, c, Now() + absl::Seconds(i));
    }
    j.status.stage = "Train";
    j.status.stage_state = "Ready";
    j.status.rounds = 1;
    cluster.PutStatus("il", "helmet-detection-incremental", j.StatusToJson());
    auto back = Parse<IncrementalLearningJob>(cluster.Get("il", "helmet-detection-incremental"));
    CHECK(back.status == j.status);
    CHECK(back.status.conditions.size() == kMaxConditions);
    // One more than the cap is refused by the schema.
    Json too_many = j.StatusToJson();
    too_many["conditions"].push_back(too_many["conditions"][0]);
    CommandResult r =
        cluster.Kubectl({"patch", "il", "helmet-detection-incremental", "--subresource=status",
                         "--type=merge", "-p", Json{{"status", too_many}}.dump()});
    CHECK(r.exit_code != 0);
  }
  SECTION("LifelongLearningJob") {
    auto j = Parse<LifelongLearningJob>(cluster.Get("ll", "atcii-classifier"));
    j.status.stage = "Eval";
    j.status.stage_state = "Running";
    KnowledgeBase kb;
    kb.number_of_ai_models = 1;
    kb.list_of_ai_models = {{"m1", 0.8, 100}};
    j.status.knowledge_base = kb;
    cluster.PutStatus("ll", "atcii-classifier", j.StatusToJson());
    CHECK(Parse<LifelongLearningJob>(cluster.Get("ll", "atcii-classifier")).status == j.status);
  }
}

TEST_CASE("the API server rejects what the schemas forbid and accepts Sedna's own spellings") {
  Cluster cluster;
  cluster.Ok({"apply", "-f", kSourceDir + "/deploy/crds/"});
  const std::string bad = R"(
apiVersion: sedna.io/v1alpha1
kind: IncrementalLearningJob
metadata: {name: bad}
spec:
  dataset: {name: d, trainProb: 1.5}
  initialModel: {name: m}
  trainSpec:
    template: {spec: {containers: []}}
    trigger: {timer: {start: "25:00", end: "24:00"},
              condition: {operator: "=>", threshold: 1, metric: num_of_samples}}
  evalSpec: {template: {spec: {containers: [{name: e, image: i}]}}}
  deploySpec:
    model: {name: m, pollPeriodSeconds: 0}
    trigger: {condition: {operator: ">", threshold: 0.1, metric: precision_delta}}
    template: {spec: {containers: [{name: d, image: i}]}}
  outputDir: /out
)";
  CommandResult r = cluster.Kubectl({"apply", "-f", "-"}, bad);
  CHECK(r.exit_code != 0);
  for (const char* field :
       {"spec.dataset.trainProb", "spec.trainSpec.template.spec.containers",
        "spec.trainSpec.trigger.timer.start", "spec.trainSpec.trigger.condition.operator",
        "spec.deploySpec.model.pollPeriodSeconds"}) {
    CAPTURE(field, r.err);
    CHECK(r.err.find(field) != std::string::npos);
  }

  // Sedna writes times unquoted (02:00) and ends windows at 24:00; pollPeriodSeconds defaults
  // to 60.
  const std::string sedna_style = R"(
apiVersion: sedna.io/v1alpha1
kind: IncrementalLearningJob
metadata: {name: sedna-style}
spec:
  initialModel: {name: "initial-model"}
  dataset: {name: "incremental-dataset", trainProb: 0.8}
  trainSpec:
    template: {spec: {nodeName: edge0, containers: [{name: train-worker, image: img}]}}
    trigger:
      checkPeriodSeconds: 60
      timer:
        start: 02:00
        end: 24:00
      condition: {operator: ">", threshold: 500, metric: num_of_samples}
  evalSpec:
    template: {spec: {containers: [{name: eval-worker, image: img}]}}
  deploySpec:
    model: {name: "deploy-model", hotUpdateEnabled: true}
    trigger: {condition: {operator: ">", threshold: 0.1, metric: precision_delta}}
    hardExampleMining: {name: "IBT"}
    template: {spec: {containers: [{name: infer-worker, image: img}]}}
  outputDir: "/output"
)";
  cluster.Ok({"apply", "-f", "-"}, sedna_style);
  auto job = Parse<IncrementalLearningJob>(cluster.Get("il", "sedna-style"));
  CHECK(job.Validate().empty());
  REQUIRE(job.spec.train_spec.trigger.timer.has_value());
  CHECK(job.spec.train_spec.trigger.timer->start == "02:00");
  CHECK(job.spec.deploy_spec.model.poll_period_seconds == 60);  // The CRD's default.
}

}  // namespace
}  // namespace nereid::api
