// Parsing, validation and serialization of each kind, starting from the checked-in examples and
// breaking them one field at a time.

#include <catch2/catch.hpp>
#include <functional>

#include "common/api/dataset.h"
#include "common/api/federated_learning_job.h"
#include "common/api/incremental_learning_job.h"
#include "common/api/joint_inference_service.h"
#include "common/api/lifelong_learning_job.h"
#include "common/api/model.h"
#include "common/api/object_validation.h"
#include "common/api/sedna_contract.h"
#include "common/api/validation.h"
#include "tests/common/api/test_data.h"

namespace nereid::api {
namespace {

using kube::Json;
using testing::Example;

std::string Describe(const Causes& causes) { return FormatCauses(causes); }

bool Has(const Causes& causes, const std::string& field, const std::string& reason = "") {
  for (const auto& c : causes) {
    if (c.field == field && (reason.empty() || c.reason == reason)) return true;
  }
  return false;
}

// Applies `mutate` to a copy of `base` and returns ValidateObject's causes (the object must parse).
Causes ValidateMutated(const Json& base, const std::function<void(Json&)>& mutate) {
  Json copy = base;
  mutate(copy);
  auto causes = ValidateObject(copy);
  INFO((causes.ok() ? std::string("parsed") : std::string(causes.status().message())));
  REQUIRE(causes.ok());
  for (const auto& c : *causes) {
    // Every message is a sentence for a user, never empty, never a bare code.
    CHECK(c.message.size() > 10);
    CHECK_FALSE(c.field.empty());
  }
  return *causes;
}

// The examples, loaded on first use (a missing example fails the test that needs it).
#define NEREID_EXAMPLE(fn, kind, name)               \
  const Json& fn() {                                 \
    static const Json example = Example(kind, name); \
    return example;                                  \
  }
NEREID_EXAMPLE(DatasetExample, "Dataset", "helmet-detection-dataset")
NEREID_EXAMPLE(ModelExample, "Model", "helmet-detection-little-model")
NEREID_EXAMPLE(JiExample, "JointInferenceService", "helmet-detection-inference")
NEREID_EXAMPLE(FlExample, "FederatedLearningJob", "surface-defect-detection")
NEREID_EXAMPLE(IlExample, "IncrementalLearningJob", "helmet-detection-incremental")
NEREID_EXAMPLE(LlExample, "LifelongLearningJob", "atcii-classifier")
#undef NEREID_EXAMPLE
#define kDataset DatasetExample()
#define kModel ModelExample()
#define kJi JiExample()
#define kFl FlExample()
#define kIl IlExample()
#define kLl LlExample()

TEST_CASE("Dataset parses, validates and serializes") {
  auto d = Dataset::FromJson(kDataset);
  REQUIRE(d.ok());
  CHECK(d->metadata.name == "helmet-detection-dataset");
  CHECK(d->spec.url == "/data/helmet_detection/train_data/train_data.txt");
  CHECK(d->spec.format == "txt");
  CHECK(d->spec.node_name == "edge-0");
  CHECK(d->Validate().empty());
  CHECK(IsKnownDatasetFormat("TXT"));
  CHECK(IsKnownDatasetFormat("coco"));
  CHECK_FALSE(IsKnownDatasetFormat("parquet"));

  d->status.number_of_samples = 0;  // Zero is reported, unlike Sedna.
  d->status.update_time = absl::FromUnixSeconds(1714557600);
  d->status.reason = "PathNotFound";
  d->status.message = "no such file";
  d->status.observed_generation = 2;
  CHECK(d->StatusToJson() == Json::parse(R"({"numberOfSamples": 0,
      "updateTime": "2024-05-01T10:00:00Z", "reason": "PathNotFound", "message": "no such file",
      "observedGeneration": 2})"));
  auto back = Dataset::FromJson(d->ToJson());
  REQUIRE(back.ok());
  CHECK(back->spec == d->spec);
  CHECK(back->status == d->status);
  CHECK(back->metadata.name == d->metadata.name);
}

TEST_CASE("Dataset validation names every bad field") {
  Causes c = ValidateMutated(kDataset, [](Json& j) { j["spec"] = Json::object(); });
  CHECK(Has(c, "spec.url", "FieldValueRequired"));
  CHECK(Has(c, "spec.format", "FieldValueRequired"));
  CHECK(Has(c, "spec.nodeName", "FieldValueRequired"));
  CHECK(c.size() == 3);

  c = ValidateMutated(kDataset, [](Json& j) { j["spec"]["url"] = "data/train.txt"; });
  CHECK(Has(c, "spec.url", "FieldValueInvalid"));
  c = ValidateMutated(kDataset, [](Json& j) { j["spec"]["url"] = "ftp://host/x"; });
  CHECK(Has(c, "spec.url", "FieldValueNotSupported"));
  c = ValidateMutated(kDataset, [](Json& j) { j["spec"]["nodeName"] = "Edge_0"; });
  CHECK(Has(c, "spec.nodeName", "FieldValueInvalid"));
  // A missing spec is as bad as an empty one.
  c = ValidateMutated(kDataset, [](Json& j) { j.erase("spec"); });
  CHECK(c.size() == 3);
}

TEST_CASE("Model keeps Sedna's device_soc_versions spelling and checks sha256") {
  auto m = Model::FromJson(kModel);
  REQUIRE(m.ok());
  CHECK(m->Validate().empty());
  CHECK(IsSha256Hex(m->spec.sha256));

  Json j = kModel;
  j["spec"]["device_soc_versions"] = {"Ascend310", "Kirin990"};
  j["spec"]["credentialName"] = "s3-secret";
  m = Model::FromJson(j);
  REQUIRE(m.ok());
  CHECK(m->spec.device_soc_versions == std::vector<std::string>{"Ascend310", "Kirin990"});
  CHECK(m->ToJson()["spec"] == j["spec"]);

  Causes c = ValidateMutated(kModel, [](Json& j) { j["spec"]["sha256"] = "abc"; });
  CHECK(Has(c, "spec.sha256", "FieldValueInvalid"));
  c = ValidateMutated(kModel, [](Json& j) { j["spec"]["device_soc_versions"] = {""}; });
  CHECK(Has(c, "spec.device_soc_versions[0]"));
  c = ValidateMutated(kModel, [](Json& j) { j["spec"].erase("format"); });
  CHECK(Has(c, "spec.format", "FieldValueRequired"));

  m->status.verified = true;
  m->status.sha256 = m->spec.sha256;
  m->status.metrics = {{"precision", "0.91"}, {"recall", "0.88"}};
  auto back = Model::FromJson(m->ToJson());
  REQUIRE(back.ok());
  CHECK(back->status == m->status);
}

TEST_CASE("JointInferenceService parses its workers and validates them") {
  auto s = JointInferenceService::FromJson(kJi);
  REQUIRE(s.ok());
  CHECK(s->Validate().empty());
  CHECK(s->spec.edge_worker.model.name == "helmet-detection-little-model");
  CHECK(s->spec.edge_worker.hard_example_mining.name == "IBT");
  CHECK(s->spec.edge_worker.hard_example_mining.parameters.size() == 2);
  CHECK(TemplateNodeName(s->spec.edge_worker.pod_template) == "edge-0");
  CHECK(s->spec.cloud_worker.model.name == "helmet-detection-big-model");
  CHECK_FALSE(s->spec.edge_worker.hpa.has_value());

  Causes c = ValidateMutated(kJi, [](Json& j) { j["spec"]["edgeWorker"].erase("template"); });
  CHECK(Has(c, "spec.edgeWorker.template", "FieldValueRequired"));
  c = ValidateMutated(kJi, [](Json& j) {
    j["spec"]["cloudWorker"]["template"]["spec"]["containers"] = Json::array();
  });
  CHECK(Has(c, "spec.cloudWorker.template.spec.containers", "FieldValueRequired"));
  c = ValidateMutated(kJi, [](Json& j) {
    j["spec"]["cloudWorker"]["template"]["spec"]["containers"][0].erase("image");
  });
  CHECK(Has(c, "spec.cloudWorker.template.spec.containers[0].image", "FieldValueRequired"));
  c = ValidateMutated(kJi, [](Json& j) {
    auto& containers = j["spec"]["edgeWorker"]["template"]["spec"]["containers"];
    containers.push_back(containers[0]);
  });
  CHECK(Has(c, "spec.edgeWorker.template.spec.containers[1].name", "FieldValueDuplicate"));
  c = ValidateMutated(kJi, [](Json& j) { j["spec"]["edgeWorker"]["template"].erase("spec"); });
  CHECK(Has(c, "spec.edgeWorker.template.spec", "FieldValueRequired"));
  c = ValidateMutated(kJi, [](Json& j) {
    j["spec"]["edgeWorker"]["model"]["name"] = "";
    j["spec"]["edgeWorker"]["hardExampleMining"]["name"] = "";
    j["spec"]["edgeWorker"]["hardExampleMining"]["parameters"][1]["key"] = "threshold_img";
  });
  CHECK(Has(c, "spec.edgeWorker.model.name", "FieldValueRequired"));
  CHECK(Has(c, "spec.edgeWorker.hardExampleMining.name", "FieldValueRequired"));
  CHECK(Has(c, "spec.edgeWorker.hardExampleMining.parameters[1].key", "FieldValueDuplicate"));
  c = ValidateMutated(kJi, [](Json& j) {
    j["spec"]["edgeWorker"]["hpa"] = {
        {"minReplicas", 5}, {"maxReplicas", 2}, {"metrics", Json::array({Json::object()})}};
    j["spec"]["cloudWorker"]["hpa"] = {{"minReplicas", 1}};
    j["spec"]["cloudWorker"]["replicas"] = -1;
  });
  CHECK(Has(c, "spec.edgeWorker.hpa.minReplicas", "FieldValueInvalid"));
  CHECK(Has(c, "spec.edgeWorker.hpa.metrics[0].type", "FieldValueRequired"));
  CHECK(Has(c, "spec.cloudWorker.hpa.maxReplicas", "FieldValueRequired"));
  CHECK(Has(c, "spec.cloudWorker.replicas", "FieldValueInvalid"));
  c = ValidateMutated(
      kJi, [](Json& j) { j["spec"]["edgeWorker"]["template"]["spec"]["nodeName"] = "EDGE 0"; });
  CHECK(Has(c, "spec.edgeWorker.template.spec.nodeName", "FieldValueInvalid"));
}

TEST_CASE("JointInferenceService HPA and replicas round-trip") {
  Json j = kJi;
  j["spec"]["edgeWorker"]["replicas"] = 2;
  j["spec"]["cloudWorker"]["hpa"] = Json::parse(R"({
    "minReplicas": 1, "maxReplicas": 4,
    "metrics": [{"type": "Resource",
                 "resource": {"name": "cpu", "target": {"type": "Utilization",
                                                        "averageUtilization": 60}}}],
    "behavior": {"scaleDown": {"stabilizationWindowSeconds": 300}}})");
  auto s = JointInferenceService::FromJson(j);
  REQUIRE(s.ok());
  CHECK(s->Validate().empty());
  CHECK(s->spec.edge_worker.replicas == 2);
  REQUIRE(s->spec.cloud_worker.hpa.has_value());
  CHECK(s->spec.cloud_worker.hpa->max_replicas == 4);
  CHECK(s->ToJson()["spec"] == j["spec"]);
}

TEST_CASE("FederatedLearningJob parses workers and transmitter, and validates them") {
  auto job = FederatedLearningJob::FromJson(kFl);
  REQUIRE(job.ok());
  CHECK(job->Validate().empty());
  REQUIRE(job->spec.training_workers.size() == 2);
  CHECK(job->spec.training_workers[1].dataset.name == "surface-defect-dataset-edge-1");
  CHECK(TemplateNodeName(job->spec.training_workers[1].pod_template) == "edge-1");
  CHECK_FALSE(job->spec.transmitter.has_value());

  Json j = kFl;
  j["spec"]["pretrainedModel"] = {{"name", "yolo-v5-pretrained-model"}};
  j["spec"]["transmitter"] =
      Json::parse(R"({"s3": {"aggDataPath": "s3://cotraining", "credentialName": "ctsecret"}})");
  job = FederatedLearningJob::FromJson(j);
  REQUIRE(job.ok());
  CHECK(job->Validate().empty());
  REQUIRE(job->spec.transmitter.has_value());
  CHECK(job->spec.transmitter->Name() == "s3");
  CHECK(job->ToJson()["spec"] == j["spec"]);
  j["spec"]["transmitter"] = Json::parse(R"({"ws": {}})");
  job = FederatedLearningJob::FromJson(j);
  REQUIRE(job.ok());
  CHECK(job->spec.transmitter->ws);
  CHECK(job->spec.transmitter->Name() == "ws");
  CHECK(job->ToJson()["spec"] == j["spec"]);

  Causes c = ValidateMutated(kFl, [](Json& j) { j["spec"]["trainingWorkers"] = Json::array(); });
  CHECK(Has(c, "spec.trainingWorkers", "FieldValueRequired"));
  c = ValidateMutated(kFl, [](Json& j) {
    j["spec"]["trainingWorkers"][1]["dataset"]["name"] = "";
    j["spec"]["trainingWorkers"][0].erase("template");
    j["spec"]["aggregationWorker"]["model"].erase("name");
  });
  CHECK(Has(c, "spec.trainingWorkers[1].dataset.name", "FieldValueRequired"));
  CHECK(Has(c, "spec.trainingWorkers[0].template", "FieldValueRequired"));
  CHECK(Has(c, "spec.aggregationWorker.model.name", "FieldValueRequired"));
  CHECK(c.size() == 3);
  c = ValidateMutated(kFl, [](Json& j) {
    j["spec"]["transmitter"] = Json::parse(R"({"ws": {}, "s3": {"aggDataPath": "/tmp/agg"}})");
    j["spec"]["pretrainedModel"] = {{"name", ""}};
  });
  // ws and s3 together are accepted (s3 wins, as in Sedna): only the bad path is an error.
  CHECK_FALSE(Has(c, "spec.transmitter", "FieldValueInvalid"));
  CHECK(Has(c, "spec.transmitter.s3.aggDataPath", "FieldValueInvalid"));
  CHECK(Has(c, "spec.pretrainedModel.name", "FieldValueRequired"));
}

TEST_CASE("IncrementalLearningJob parses triggers and the deploy model") {
  auto job = IncrementalLearningJob::FromJson(kIl);
  REQUIRE(job.ok());
  INFO(Describe(job->Validate()));
  CHECK(job->Validate().empty());
  const auto& s = job->spec;
  CHECK(s.dataset.name == "helmet-detection-dataset");
  CHECK(s.dataset.train_prob == Approx(0.8));
  CHECK(s.initial_model.name == "helmet-detection-initial-model");
  CHECK(s.train_spec.trigger.CheckPeriodSeconds() == 60);
  REQUIRE(s.train_spec.trigger.timer.has_value());
  CHECK(s.train_spec.trigger.timer->start == "00:00");
  CHECK(s.train_spec.trigger.timer->end == "24:00");
  CHECK(s.train_spec.trigger.condition.op == ">");
  CHECK(s.train_spec.trigger.condition.threshold == 5);
  CHECK(s.train_spec.trigger.condition.metric == "num_of_samples");
  CHECK(s.deploy_spec.model.hot_update_enabled);
  CHECK(s.deploy_spec.model.PollPeriodSeconds() == 60);
  CHECK(s.deploy_spec.trigger.condition.metric == "precision_delta");
  CHECK_FALSE(s.deploy_spec.trigger.timer.has_value());
  REQUIRE(s.deploy_spec.hard_example_mining.has_value());
  CHECK(s.deploy_spec.hard_example_mining->name == "IBT");
  CHECK(s.output_dir == "/data/output/helmet_detection");
  CHECK_FALSE(s.eval_spec.initial_model.has_value());
  DeployModel defaults;
  CHECK(defaults.PollPeriodSeconds() == kDefaultPollPeriodSeconds);
}

TEST_CASE("IncrementalLearningJob validation: triggers, bounds, references") {
  Causes c = ValidateMutated(kIl, [](Json& j) {
    j["spec"]["dataset"]["trainProb"] = 1.5;
    j["spec"]["trainSpec"]["trigger"]["condition"]["operator"] = "~";
    j["spec"]["trainSpec"]["trigger"]["timer"]["start"] = "25:00";
    j["spec"]["trainSpec"]["trigger"]["timer"]["end"] = "7:00";
    j["spec"]["trainSpec"]["trigger"]["checkPeriodSeconds"] = 0;
    j["spec"]["deploySpec"]["trigger"]["condition"]["metric"] = "precision_delta[x]";
    j["spec"]["deploySpec"]["model"]["pollPeriodSeconds"] = 0;
    j["spec"]["outputDir"] = "output";
    j["spec"]["evalSpec"]["initialModel"] = {{"name", ""}};
  });
  INFO(Describe(c));
  CHECK(Has(c, "spec.dataset.trainProb", "FieldValueInvalid"));
  CHECK(Has(c, "spec.trainSpec.trigger.condition.operator", "FieldValueNotSupported"));
  CHECK(Has(c, "spec.trainSpec.trigger.timer.start", "FieldValueInvalid"));
  CHECK(Has(c, "spec.trainSpec.trigger.timer.end", "FieldValueInvalid"));
  CHECK(Has(c, "spec.trainSpec.trigger.checkPeriodSeconds", "FieldValueInvalid"));
  CHECK(Has(c, "spec.deploySpec.trigger.condition.metric", "FieldValueInvalid"));
  CHECK(Has(c, "spec.deploySpec.model.pollPeriodSeconds", "FieldValueInvalid"));
  CHECK(Has(c, "spec.outputDir", "FieldValueInvalid"));
  CHECK(Has(c, "spec.evalSpec.initialModel.name", "FieldValueRequired"));
  CHECK(c.size() == 9);

  c = ValidateMutated(kIl, [](Json& j) {
    j["spec"]["trainSpec"].erase("trigger");
    j["spec"]["deploySpec"]["trigger"]["condition"]["metric"] = "precision_delta[2]";
    j["spec"]["dataset"]["name"] = "";
    j["spec"]["initialModel"]["name"] = "Initial Model";
    j["spec"]["deploySpec"]["hardExampleMining"]["name"] = "";
  });
  INFO(Describe(c));
  CHECK(Has(c, "spec.trainSpec.trigger.condition.operator", "FieldValueRequired"));
  CHECK(Has(c, "spec.trainSpec.trigger.condition.metric", "FieldValueRequired"));
  CHECK_FALSE(Has(c, "spec.deploySpec.trigger.condition.metric"));  // Indexed metric is fine.
  CHECK(Has(c, "spec.dataset.name", "FieldValueRequired"));
  CHECK(Has(c, "spec.initialModel.name", "FieldValueInvalid"));
  CHECK(Has(c, "spec.deploySpec.hardExampleMining.name", "FieldValueRequired"));

  // Every template is checked, each at its own path.
  c = ValidateMutated(kIl, [](Json& j) {
    j["spec"]["trainSpec"].erase("template");
    j["spec"]["evalSpec"]["template"]["spec"].erase("containers");
    j["spec"]["deploySpec"]["template"] = Json::object();
  });
  CHECK(Has(c, "spec.trainSpec.template", "FieldValueRequired"));
  CHECK(Has(c, "spec.evalSpec.template.spec.containers", "FieldValueRequired"));
  CHECK(Has(c, "spec.deploySpec.template.spec", "FieldValueRequired"));
}

TEST_CASE("LifelongLearningJob parses, validates and keeps its knowledge base") {
  auto job = LifelongLearningJob::FromJson(kLl);
  REQUIRE(job.ok());
  CHECK(job->Validate().empty());
  CHECK(job->spec.dataset.name == "atcii-dataset");
  CHECK(TemplateNodeName(job->spec.deploy_spec.pod_template) == "edge-1");

  Causes c = ValidateMutated(kLl, [](Json& j) {
    j["spec"]["deploySpec"].erase("template");
    j["spec"]["trainSpec"]["trigger"]["timer"]["end"] = "7:00";
    j["spec"]["dataset"]["trainProb"] = -0.1;
    j["spec"]["outputDir"] = "";
  });
  CHECK(Has(c, "spec.deploySpec.template", "FieldValueRequired"));
  CHECK(Has(c, "spec.trainSpec.trigger.timer.end", "FieldValueInvalid"));
  CHECK(Has(c, "spec.dataset.trainProb", "FieldValueInvalid"));
  CHECK(Has(c, "spec.outputDir", "FieldValueRequired"));
  CHECK(c.size() == 4);

  KnowledgeBase kb;
  kb.number_of_ai_models = 2;
  kb.list_of_ai_models = {{"m1", 0.8, 100}, {"m2", 0.75, 40}};
  kb.number_of_ai_classes = 1;
  kb.list_of_ai_classes = {"cold"};
  kb.number_of_unseen_sample = 7;
  job->status.knowledge_base = kb;
  job->status.stage = "Eval";
  job->status.stage_state = "Running";
  job->status.rounds = 3;
  Json status = job->StatusToJson();
  CHECK(status["knowledgeBase"]["AIModels"]["listOfAIModels"][1]["modelID"] == "m2");
  CHECK(status["stageState"] == "Running");
  auto back = LifelongLearningJob::FromJson(job->ToJson());
  REQUIRE(back.ok());
  CHECK(back->status == job->status);
}

TEST_CASE("type errors fail parsing with every bad field listed") {
  Json j = kIl;
  j["spec"]["dataset"]["trainProb"] = "0.8";
  j["spec"]["trainSpec"]["trigger"]["checkPeriodSeconds"] = 1.5;
  j["spec"]["deploySpec"]["model"]["hotUpdateEnabled"] = "yes";
  j["spec"]["evalSpec"]["template"] = "not an object";
  j["status"] = {{"startTime", "yesterday"}, {"conditions", {1}}};
  auto job = IncrementalLearningJob::FromJson(j);
  REQUIRE_FALSE(job.ok());
  CHECK(kube::IsInvalid(job.status()));
  std::string message(job.status().message());
  CHECK(message.rfind("IncrementalLearningJob.sedna.io \"helmet-detection-incremental\" is invalid",
                      0) == 0);
  Causes causes = kube::Causes(job.status());
  INFO(message);
  CHECK(Has(causes, "spec.dataset.trainProb", "FieldValueTypeInvalid"));
  CHECK(Has(causes, "spec.trainSpec.trigger.checkPeriodSeconds", "FieldValueTypeInvalid"));
  CHECK(Has(causes, "spec.deploySpec.model.hotUpdateEnabled", "FieldValueTypeInvalid"));
  CHECK(Has(causes, "spec.evalSpec.template", "FieldValueTypeInvalid"));
  CHECK(Has(causes, "status.startTime", "FieldValueInvalid"));
  CHECK(Has(causes, "status.conditions[0]", "FieldValueTypeInvalid"));
  CHECK(causes.size() == 6);
  CHECK(message.find("must be a number, got string \"0.8\"") != std::string::npos);

  // Wrong kind/apiVersion, non-objects and nonsense never crash.
  Json wrong = kDataset;
  wrong["kind"] = "Model";
  wrong["apiVersion"] = "sedna.io/v1";
  auto d = Dataset::FromJson(wrong);
  REQUIRE_FALSE(d.ok());
  CHECK(Has(kube::Causes(d.status()), "kind", "FieldValueNotSupported"));
  CHECK(Has(kube::Causes(d.status()), "apiVersion", "FieldValueNotSupported"));
  for (const Json& junk : {Json(nullptr), Json(42), Json::array(), Json("x"),
                           Json::parse(R"({"spec": []})"), Json::parse(R"({"spec": {"url": 7}})"),
                           Json::parse(R"({"spec": {"trainingWorkers": [1, null]}})")}) {
    CAPTURE(junk.dump());
    bool parsed[] = {Dataset::FromJson(junk).ok(),
                     Model::FromJson(junk).ok(),
                     JointInferenceService::FromJson(junk).ok(),
                     FederatedLearningJob::FromJson(junk).ok(),
                     IncrementalLearningJob::FromJson(junk).ok(),
                     LifelongLearningJob::FromJson(junk).ok()};
    bool spec_is_object = junk.is_object() && junk.contains("spec") && junk["spec"].is_object();
    for (bool p : parsed) {
      if (!junk.is_object() || (junk.contains("spec") && !spec_is_object)) CHECK_FALSE(p);
    }
  }
  auto fl = FederatedLearningJob::FromJson(Json::parse(R"({"spec": {"trainingWorkers": [1]}})"));
  REQUIRE_FALSE(fl.ok());
  CHECK(Has(kube::Causes(fl.status()), "spec.trainingWorkers[0]", "FieldValueTypeInvalid"));
  // An integral float is an integer; a huge one is not.
  Json big = kIl;
  big["spec"]["trainSpec"]["trigger"]["checkPeriodSeconds"] = 30.0;
  auto ok = IncrementalLearningJob::FromJson(big);
  REQUIRE(ok.ok());
  CHECK(ok->spec.train_spec.trigger.CheckPeriodSeconds() == 30);
  big["spec"]["trainSpec"]["trigger"]["checkPeriodSeconds"] = 1e300;
  CHECK_FALSE(IncrementalLearningJob::FromJson(big).ok());
  big["spec"]["trainSpec"]["trigger"]["checkPeriodSeconds"] = UINT64_MAX;
  auto too_big = IncrementalLearningJob::FromJson(big);
  REQUIRE_FALSE(too_big.ok());
  CHECK(Has(kube::Causes(too_big.status()), "spec.trainSpec.trigger.checkPeriodSeconds",
            "FieldValueInvalid"));
}

TEST_CASE("a PodTemplateSpec round-trips losslessly") {
  Json pod_template = Json::parse(R"({
    "metadata": {"labels": {"app": "x", "tier": "edge"}, "annotations": {"a/b": "c"},
                 "name": "ignored-by-controllers"},
    "spec": {
      "nodeName": "edge-0",
      "hostNetwork": true,
      "nodeSelector": {"kubernetes.io/arch": "arm64"},
      "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [
          {"key": "node-role.kubernetes.io/edge", "operator": "Exists"}]}]}}},
      "tolerations": [{"key": "edge", "operator": "Exists", "effect": "NoSchedule"}],
      "initContainers": [{"name": "init", "image": "busybox", "command": ["sh", "-c", "true"]}],
      "containers": [{
        "name": "w", "image": "img:1", "args": ["--x=1", ""],
        "env": [{"name": "A", "value": "0.6"},
                {"name": "B", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
        "ports": [{"containerPort": 5000, "hostPort": 5000, "protocol": "TCP", "name": "http"}],
        "resources": {"requests": {"cpu": "100m", "memory": "64M"}, "limits": {"cpu": 2}},
        "livenessProbe": {"httpGet": {"path": "/", "port": "http"}, "periodSeconds": 10},
        "securityContext": {"privileged": false, "runAsUser": 0},
        "volumeMounts": [{"name": "d", "mountPath": "/data/", "readOnly": true}]
      }],
      "volumes": [{"name": "d", "hostPath": {"path": "/data", "type": "DirectoryOrCreate"}},
                  {"name": "e", "emptyDir": {}}],
      "restartPolicy": "OnFailure",
      "terminationGracePeriodSeconds": 30,
      "dnsPolicy": "ClusterFirstWithHostNet",
      "x-unknown-future-field": {"nested": [1, 2.5, "three", null, {"k": []}]},
      "unicode": "模型 ✓"
    }
  })");
  Json j = kIl;
  j["spec"]["trainSpec"]["template"] = pod_template;
  j["spec"]["evalSpec"]["template"] = pod_template;
  auto job = IncrementalLearningJob::FromJson(j);
  REQUIRE(job.ok());
  CHECK(job->Validate().empty());
  CHECK(job->spec.train_spec.pod_template == pod_template);
  Json out = job->ToJson();
  CHECK(out["spec"]["trainSpec"]["template"] == pod_template);
  CHECK(out["spec"]["trainSpec"]["template"].dump() == pod_template.dump());  // Byte for byte.
  CHECK(out["spec"] == j["spec"]);
  // And through text, as it travels to the API server and back.
  auto again = IncrementalLearningJob::FromJson(Json::parse(out.dump()));
  REQUIRE(again.ok());
  CHECK(again->spec == job->spec);
}

TEST_CASE("ValidateObject dispatches by kind") {
  for (const Json* obj : {&kDataset, &kModel, &kJi, &kFl, &kIl, &kLl}) {
    auto causes = ValidateObject(*obj);
    REQUIRE(causes.ok());
    CHECK(causes->empty());
  }
  auto unknown = ValidateObject(Json::parse(R"({"kind": "Pod", "apiVersion": "v1"})"));
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().code() == absl::StatusCode::kUnimplemented);
  Json broken = kDataset;
  broken["spec"]["url"] = 5;
  auto bad = ValidateObject(broken);
  REQUIRE_FALSE(bad.ok());
  CHECK(kube::IsInvalid(bad.status()));
}

}  // namespace
}  // namespace nereid::api
