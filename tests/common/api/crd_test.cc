// The CRDs in deploy/crds: valid apiextensions.k8s.io/v1 documents with structural schemas, the
// names, short names, category, status subresource and printer columns we promise, and schemas
// that accept everything the typed kinds write (nothing would be pruned) and reject what Validate()
// rejects where a schema can express it.

#include <catch2/catch.hpp>
#include <functional>
#include <set>

#include "absl/strings/ascii.h"
#include "common/api/dataset.h"
#include "common/api/federated_learning_job.h"
#include "common/api/incremental_learning_job.h"
#include "common/api/joint_inference_service.h"
#include "common/api/lifelong_learning_job.h"
#include "common/api/model.h"
#include "common/api/reid_job.h"
#include "common/api/sedna_contract.h"
#include "common/api/video_analytics_job.h"
#include "tests/common/api/schema_check.h"
#include "tests/common/api/test_data.h"

namespace nereid::api {
namespace {

using kube::Json;
using testing::CheckAgainstSchema;
using testing::CrdFor;
using testing::SchemaFor;

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += s + "\n";
  return out;
}

struct Expected {
  std::string_view kind;
  std::vector<std::string> short_names;
  std::vector<std::string> columns;  // Default (priority 0) columns, in order.
};

const std::vector<Expected>& ExpectedCrds() {
  static const std::vector<Expected> expected = {
      {kinds::kDataset, {}, {"Node", "Format", "Samples", "Error", "Age"}},
      {kinds::kModel, {}, {"URL", "Format", "Verified", "Age"}},
      {kinds::kJointInferenceService, {"ji"}, {"Phase", "Active", "Failed", "Age"}},
      {kinds::kFederatedLearningJob,
       {"fl"},
       {"Phase", "Round", "Active", "Succeeded", "Failed", "Age"}},
      {kinds::kIncrementalLearningJob, {"il"}, {"Stage", "Status", "Rounds", "Age"}},
      {kinds::kLifelongLearningJob, {"ll"}, {"Stage", "Status", "Rounds", "Age"}},
      {kinds::kFeatureExtractionService, {"fe"}, {"Phase", "Active", "Failed", "Age"}},
      {kinds::kObjectSearchService, {"objs"}, {"Phase", "Active", "Failed", "Age"}},
      {kinds::kObjectTrackingService, {"objt"}, {"Phase", "Active", "Failed", "Age"}},
      {kinds::kVideoAnalyticsJob, {"va"}, {"Phase", "Active", "Succeeded", "Failed", "Age"}},
      {kinds::kReidJob, {"reid"}, {"Phase", "Active", "Succeeded", "Failed", "Age"}},
  };
  return expected;
}

TEST_CASE("there is exactly one CRD file per kind") {
  // Nothing else may be in the directory as YAML: `kubectl apply -f deploy/crds/` applies every
  // .yaml/.yml/.json file there (a kustomization.yaml would make it fail).
  std::vector<std::string> files = testing::ListFiles("deploy/crds", ".yaml");
  CHECK(testing::ListFiles("deploy/crds", ".yml").empty());
  CHECK(testing::ListFiles("deploy/crds", ".json").empty());
  // Plus DistributedJob's (common/job; its CRD is tested in tests/common/job) and EdgeNode's
  // (written by the GM, not a user's kind; edge_node_test.cc).
  CHECK(files.size() == resources::All().size() + 2);
  std::set<std::string> crd_files(files.begin(), files.end());
  CHECK(crd_files.count("sedna.io_distributedjobs.yaml") == 1);
  CHECK(crd_files.count("sedna.io_edgenodes.yaml") == 1);
  for (const kube::Resource* r : resources::All()) {
    CHECK(crd_files.count("sedna.io_" + r->resource + ".yaml") == 1);
  }
}

TEST_CASE("CRD names, scope, version, subresource, category and short names") {
  for (const Expected& e : ExpectedCrds()) {
    CAPTURE(e.kind);
    const kube::Resource* r = resources::ForKind(e.kind);
    REQUIRE(r != nullptr);
    Json crd = CrdFor(e.kind);
    CHECK(crd["apiVersion"] == "apiextensions.k8s.io/v1");
    CHECK(crd["kind"] == "CustomResourceDefinition");
    CHECK(crd["metadata"]["name"] == r->QualifiedName());
    const Json& spec = crd["spec"];
    CHECK(spec["group"] == "sedna.io");
    CHECK(spec["scope"] == "Namespaced");
    const Json& names = spec["names"];
    CHECK(names["kind"] == std::string(e.kind));
    CHECK(names["listKind"] == std::string(e.kind) + "List");
    CHECK(names["plural"] == r->resource);
    CHECK(names["singular"] == absl::AsciiStrToLower(std::string(e.kind)));
    CHECK(names["categories"] == Json::array({"sedna"}));
    if (e.short_names.empty()) {
      // "ds" would collide with DaemonSet; Sedna has none for these either.
      CHECK_FALSE(names.contains("shortNames"));
    } else {
      CHECK(names["shortNames"] == Json(e.short_names));
    }
    REQUIRE(spec["versions"].size() == 1);
    const Json& version = spec["versions"][0];
    CHECK(version["name"] == "v1alpha1");
    CHECK(version["served"] == true);
    CHECK(version["storage"] == true);
    CHECK(version["subresources"] == Json::parse(R"({"status": {}})"));
    // Only keys apiextensions.k8s.io/v1 knows.
    std::set<std::string> allowed = {
        "name", "served", "storage", "subresources", "additionalPrinterColumns", "schema"};
    for (const auto& [key, value] : version.items()) CHECK(allowed.count(key) == 1);
  }
}

TEST_CASE("schemas are structural and preserve unknown fields only in templates and HPA blobs") {
  for (const Expected& e : ExpectedCrds()) {
    CAPTURE(e.kind);
    Json schema = SchemaFor(e.kind);
    testing::SchemaLint lint = testing::LintStructural(schema);
    INFO(Join(lint.errors));
    CHECK(lint.errors.empty());
    for (const std::string& path : lint.preserve_unknown_paths) {
      CAPTURE(path);
      bool in_template = path.find(".template") != std::string::npos;
      bool in_hpa = path.find(".hpa.metrics[].") != std::string::npos ||
                    path.find(".hpa.behavior.") != std::string::npos;
      // The batch/v1 policy blobs the inference jobs keep as written (not acted on).
      bool job_policy = path == "spec.podFailurePolicy" || path == "spec.successPolicy";
      CHECK((in_template || in_hpa || job_policy));
      CHECK(path.rfind("spec.", 0) == 0);  // Never in status.
    }
    // Root: spec required; status is an object.
    CHECK(schema["required"] == Json::array({"spec"}));
    CHECK(schema["properties"]["status"]["type"] == "object");
    // Conditions, where a kind has them, are capped like AppendCondition caps them.
    const Json* conditions = testing::SchemaAt(schema, ".status.conditions");
    if (conditions != nullptr) CHECK((*conditions)["maxItems"] == kMaxConditions);
  }
  // Every template is preserve-unknown at the template itself.
  std::vector<std::string> templates;
  for (const Expected& e : ExpectedCrds()) {
    for (const std::string& path :
         testing::LintStructural(SchemaFor(e.kind)).preserve_unknown_paths) {
      if (path.size() >= 9 && path.compare(path.size() - 9, 9, ".template") == 0) {
        templates.push_back(path);
      }
    }
  }
  CHECK(templates.size() == 18);  // JI 2, FL 2, IL 3, LL 3, FE 1, objs 3, objt 2, VA 1, ReID 1.
}

TEST_CASE("printer columns answer 'is it working?' and point at declared fields") {
  for (const Expected& e : ExpectedCrds()) {
    CAPTURE(e.kind);
    Json crd = CrdFor(e.kind);
    const Json& version = crd["spec"]["versions"][0];
    const Json& schema = version["schema"]["openAPIV3Schema"];
    std::vector<std::string> defaults;
    for (const Json& col : version["additionalPrinterColumns"]) {
      std::string name = col["name"].get<std::string>();
      std::string path = col["jsonPath"].get<std::string>();
      std::string type = col["type"].get<std::string>();
      CAPTURE(name, path);
      if (col.value("priority", 0) == 0) defaults.push_back(name);
      if (path == ".metadata.creationTimestamp") {
        CHECK(type == "date");
        continue;
      }
      const Json* field = testing::SchemaAt(schema, path);
      REQUIRE(field != nullptr);
      std::string field_type = (*field)["type"].get<std::string>();
      if (type == "date") {
        CHECK((field_type == "string" && field->value("format", "") == "date-time"));
      } else {
        CHECK(field_type == type);
      }
    }
    CHECK(defaults == e.columns);
  }
}

// Validates `object` against the CRD of its kind.
std::vector<std::string> CheckObject(const Json& object) {
  return CheckAgainstSchema(SchemaFor(kube::StringAt(object, "kind")), object);
}

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

absl::Time T(int seconds) { return absl::FromUnixSeconds(1714557600 + seconds); }

// A one-per-type condition as the GM writes it on a Dataset or Model.
Condition Counted() {
  Condition c = Condition::Of("Counted", "False", "PathNotFound", "msg");
  c.last_transition_time = T(1);
  c.last_heartbeat_time = T(1);
  return c;
}

TEST_CASE("everything the typed kinds write passes the CRD schema (nothing is pruned)") {
  SECTION("Dataset") {
    Dataset d;
    d.metadata.name = "d";
    d.spec = {"/data/a.txt", "txt", "edge-0", "secret"};
    d.status = {12, T(1), "PathNotFound", "msg", 3, {Counted()}};
    auto errors = CheckObject(d.ToJson());
    INFO(Join(errors));
    CHECK(errors.empty());
  }
  SECTION("Model") {
    Model m;
    m.metadata.name = "m";
    m.spec = {"s3://b/m.pb", "pb", {"Ascend310"}, "secret", std::string(64, 'a')};
    m.status = {T(1), {{"precision", "0.9"}}, true, std::string(64, 'b'), "DigestMismatch", "msg",
                2, {Counted()}};
    auto errors = CheckObject(m.ToJson());
    INFO(Join(errors));
    CHECK(errors.empty());
  }
  Json pod_template = Json::parse(R"({"spec": {"containers": [{"name": "w", "image": "i"}]}})");
  SECTION("JointInferenceService") {
    JointInferenceService s;
    s.metadata.name = "ji";
    s.spec.edge_worker = {{"little"},
                          {"IBT", {{"threshold_img", "0.9"}}},
                          pod_template,
                          Hpa{1, 3, Json::parse(R"([{"type": "Resource", "resource": {}}])"),
                              Json::parse(R"({"scaleUp": {"policies": []}})")},
                          2};
    s.spec.cloud_worker = {{"big"}, pod_template, std::nullopt, 0};
    s.status.phase = "Running";
    AppendCondition(&s.status.conditions, Cond("Running", "", "WorkersAvailable", "2/2"), T(1));
    s.status.start_time = T(0);
    s.status.active = 2;
    s.status.failed = 0;
    s.status.metrics = {{"inferenceNumber", "10"}};
    s.status.observed_generation = 1;
    auto errors = CheckObject(s.ToJson());
    INFO(Join(errors));
    CHECK(errors.empty());
  }
  SECTION("FederatedLearningJob") {
    FederatedLearningJob j;
    j.metadata.name = "fl";
    j.spec.aggregation_worker = {{"model"}, pod_template};
    j.spec.training_workers = {{{"ds"}, pod_template}};
    j.spec.pretrained_model = NamedRef{"pre"};
    j.spec.transmitter = Transmitter{false, S3Transmitter{"s3://bucket/agg", "secret"}};
    j.status.phase = "Running";
    Condition training = Cond("Training", "", "Round", "round 3");
    training.last_probe_time = T(0);
    AppendCondition(&j.status.conditions, training, T(1));
    j.status.start_time = T(0);
    j.status.completion_time = T(9);
    j.status.active = 3;
    j.status.succeeded = 1;
    j.status.failed = 1;
    j.status.current_round = 3;
    j.status.observed_generation = 1;
    Json json = j.ToJson();
    CHECK(json["status"]["conditions"][0].contains("lastProbeTime"));
    auto errors = CheckObject(json);
    INFO(Join(errors));
    CHECK(errors.empty());
    j.spec.transmitter = Transmitter{true, std::nullopt};
    CHECK(CheckObject(j.ToJson()).empty());
  }
  StagedJobStatus staged;
  AppendCondition(
      &staged.conditions,
      Cond("Ready", "Train", "TriggerFired", "12 samples", R"({"input":{"dataURL":"/x"}})"), T(1));
  staged.start_time = T(0);
  staged.completion_time = T(5);
  staged.stage = "Train";
  staged.stage_state = "Ready";
  staged.rounds = 1;
  staged.observed_generation = 4;
  Trigger trigger{30, Timer{"22:00", "06:00"}, {"ge", 0.5, "precision_delta[0]"}};
  SECTION("IncrementalLearningJob") {
    IncrementalLearningJob j;
    j.metadata.name = "il";
    j.spec.dataset = {"ds", 0.8};
    j.spec.initial_model = {"init"};
    j.spec.train_spec = {pod_template, trigger};
    j.spec.eval_spec = {pod_template, NamedRef{"eval-init"}};
    j.spec.deploy_spec = {
        {"deploy", true, 30}, trigger, HardExampleMining{"IBT", {}}, pod_template};
    j.spec.credential_name = "secret";
    j.spec.output_dir = "s3://bucket/out";
    j.status = staged;
    auto errors = CheckObject(j.ToJson());
    INFO(Join(errors));
    CHECK(errors.empty());
    CHECK(j.Validate().empty());
  }
  SECTION("LifelongLearningJob") {
    LifelongLearningJob j;
    j.metadata.name = "ll";
    j.spec.dataset = {"ds", 1.0};
    j.spec.train_spec = {pod_template, trigger};
    j.spec.eval_spec = {pod_template};
    j.spec.deploy_spec = {pod_template};
    j.spec.output_dir = "/data/out";
    static_cast<StagedJobStatus&>(j.status) = staged;
    j.status.knowledge_base = KnowledgeBase{2, {{"m1", 0.8, 100}}, 1, {"cold"}, 3, 4};
    auto errors = CheckObject(j.ToJson());
    INFO(Join(errors));
    CHECK(errors.empty());
    CHECK(j.Validate().empty());
  }
}

TEST_CASE("the schemas reject what Validate() rejects, where a schema can say it") {
  struct Case {
    std::string kind, name, field;
    std::function<void(Json&)> mutate;
  };
  std::vector<Case> cases = {
      {"IncrementalLearningJob", "helmet-detection-incremental", "spec.dataset.trainProb",
       [](Json& j) { j["spec"]["dataset"]["trainProb"] = 1.5; }},
      {"IncrementalLearningJob", "helmet-detection-incremental",
       "spec.trainSpec.trigger.condition.operator",
       [](Json& j) { j["spec"]["trainSpec"]["trigger"]["condition"]["operator"] = "=>"; }},
      {"IncrementalLearningJob", "helmet-detection-incremental",
       "spec.trainSpec.trigger.timer.start",
       [](Json& j) { j["spec"]["trainSpec"]["trigger"]["timer"]["start"] = "25:00"; }},
      {"IncrementalLearningJob", "helmet-detection-incremental",
       "spec.trainSpec.trigger.checkPeriodSeconds",
       [](Json& j) { j["spec"]["trainSpec"]["trigger"]["checkPeriodSeconds"] = 0; }},
      {"IncrementalLearningJob", "helmet-detection-incremental",
       "spec.deploySpec.model.pollPeriodSeconds",
       [](Json& j) { j["spec"]["deploySpec"]["model"]["pollPeriodSeconds"] = 0; }},
      {"IncrementalLearningJob", "helmet-detection-incremental", "spec.trainSpec",
       [](Json& j) { j["spec"]["trainSpec"].erase("template"); }},
      {"LifelongLearningJob", "atcii-classifier", "spec.trainSpec.trigger.timer.end",
       [](Json& j) { j["spec"]["trainSpec"]["trigger"]["timer"]["end"] = "7:00"; }},
      {"LifelongLearningJob", "atcii-classifier", "spec.deploySpec.template.spec.containers",
       [](Json& j) { j["spec"]["deploySpec"]["template"]["spec"]["containers"] = Json::array(); }},
      {"JointInferenceService", "helmet-detection-inference", "spec.cloudWorker.replicas",
       [](Json& j) { j["spec"]["cloudWorker"]["replicas"] = -1; }},
      {"JointInferenceService", "helmet-detection-inference", "spec.edgeWorker.template",
       [](Json& j) { j["spec"]["edgeWorker"]["template"].erase("spec"); }},
      {"FederatedLearningJob", "surface-defect-detection", "spec.trainingWorkers",
       [](Json& j) { j["spec"]["trainingWorkers"] = Json::array(); }},
      {"FederatedLearningJob", "surface-defect-detection", "spec.transmitter.s3.aggDataPath",
       [](Json& j) {
         j["spec"]["transmitter"] = {{"s3", {{"aggDataPath", "/tmp"}}}};
       }},
      {"Model", "helmet-detection-little-model", "spec.sha256",
       [](Json& j) { j["spec"]["sha256"] = "xyz"; }},
      {"Dataset", "helmet-detection-dataset", "spec", [](Json& j) { j["spec"].erase("nodeName"); }},
  };
  for (const Case& c : cases) {
    CAPTURE(c.kind, c.field);
    Json obj = testing::Example(c.kind, c.name);
    REQUIRE(CheckObject(obj).empty());
    c.mutate(obj);
    std::vector<std::string> errors = CheckObject(obj);
    INFO(Join(errors));
    bool at_field = false;
    for (const std::string& e : errors) at_field = at_field || e.rfind(c.field + ":", 0) == 0;
    CHECK(at_field);
  }
}

}  // namespace
}  // namespace nereid::api
