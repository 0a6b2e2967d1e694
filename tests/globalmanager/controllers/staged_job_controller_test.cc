// StagedJobController (IncrementalLearningJob / LifelongLearningJob): the stage machine end to end
// on the fake API — stage pods through the common job library (labels, env, owner, hostNetwork,
// mounts, node), their cleanup, the inference worker and hot update, LC reports, invalid specs,
// missing references, stages on different nodes, the knowledge base.

#include "globalmanager/controllers/staged_job_controller.h"

#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/api/sedna_contract.h"
#include "common/job/expectations.h"
#include "common/kube/errors.h"
#include "common/job/pod_builder.h"
#include "globalmanager/controllers/incremental_learning_controller.h"
#include "globalmanager/controllers/lifelong_learning_controller.h"
#include "globalmanager/controllers/model_requirements.h"
#include "globalmanager/controllers/s3_credentials.h"
#include "globalmanager/controllers/stage_data.h"
#include "tests/fakes/eventually.h"
#include "tests/globalmanager/controllers/controller_env.h"
#include "tests/globalmanager/controllers/fake_model_requirements.h"

namespace nereid::gm {
namespace {

using fakes::Eventually;
using kube::Json;
using testing::ControllerEnv;
using testing::DatasetObject;
using testing::ModelObject;

const kube::Resource& Il() { return api::resources::IncrementalLearningJobs(); }
const kube::Resource& Ll() { return api::resources::LifelongLearningJobs(); }
const kube::Resource& Pods() { return kube::resources::Pods(); }

Json Container(const std::string& name) {
  return {{"name", name}, {"image", "kubeedge/sedna-example:v0.4.0"}};
}

Json Template(const std::string& container, const std::string& node = "") {
  Json spec = {{"containers", Json::array({Container(container)})}};
  if (!node.empty()) spec["nodeName"] = node;
  return {{"spec", spec}};
}

Json Trigger(const std::string& metric, const std::string& op, double threshold) {
  return {{"checkPeriodSeconds", 5},
          {"condition", {{"operator", op}, {"threshold", threshold}, {"metric", metric}}}};
}

Json IlObject(const std::string& name, bool hot_update = true) {
  return {{"apiVersion", "sedna.io/v1alpha1"},
          {"kind", "IncrementalLearningJob"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"spec",
           {{"dataset", {{"name", "ds"}, {"trainProb", 0.8}}},
            {"initialModel", {{"name", "initial"}}},
            {"trainSpec",
             {{"template", Template("train-worker")},
              {"trigger", Trigger("num_of_samples", ">", 5)}}},
            {"evalSpec", {{"template", Template("eval-worker")}}},
            {"deploySpec",
             {{"model",
               {{"name", "deploy"}, {"hotUpdateEnabled", hot_update}, {"pollPeriodSeconds", 30}}},
              {"trigger", Trigger("precision_delta", ">", 0.01)},
              {"hardExampleMining",
               {{"name", "IBT"},
                {"parameters", Json::array({{{"key", "threshold_img"}, {"value", "0.9"}}})}}},
              {"template", Template("infer-worker")}}},
            {"outputDir", "/output/il"}}}};
}

Json LlObject(const std::string& name) {
  return {{"apiVersion", "sedna.io/v1alpha1"},
          {"kind", "LifelongLearningJob"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"spec",
           {{"dataset", {{"name", "ds"}, {"trainProb", 0.8}}},
            {"trainSpec",
             {{"template", Template("train-worker")},
              {"trigger", Trigger("num_of_samples", ">", 5)}}},
            {"evalSpec", {{"template", Template("eval-worker")}}},
            {"deploySpec", {{"template", Template("infer-worker")}}},
            {"outputDir", "/output/ll"}}}};
}

std::string EnvOf(const Json& pod, const std::string& name) {
  for (const Json& e : pod["spec"]["containers"][0].value("env", Json::array())) {
    if (e.value("name", "") == name) return e.value("value", "");
  }
  return "<unset>";
}

struct Fixture {
  ControllerEnv env;
  FakeModelRequirements models;
  std::unique_ptr<StagedJobController> controller;
  const kube::Resource* resource;
  std::string kind;

  explicit Fixture(bool lifelong = false, bool with_dataset = true) {
    env.context().models = &models;
    env.context().settings.lc_server = "http://localhost:9100";
    env.context().settings.kb_server = "http://kb.sedna:9020";
    if (with_dataset) {
      env.Create(api::resources::Datasets(),
                 DatasetObject("ds", "edge-0", "/data/train/train.txt"));
    }
    env.Create(api::resources::Models(), ModelObject("initial", "/models/initial/model.pb"));
    env.Create(api::resources::Models(), ModelObject("deploy", "/models/deploy/model.pb"));
    StagedJobOptions options;
    options.output_grace = absl::Seconds(30);
    resource = lifelong ? &Ll() : &Il();
    kind = lifelong ? "LifelongLearningJob" : "IncrementalLearningJob";
    controller = env.Run(StagedJobController::Create(
        env.context(), lifelong ? LifelongLearningKind("http://kb.sedna:9020")
                                : IncrementalLearningKind(),
        options));
  }
  ~Fixture() { env.StopInformersAndController(*controller); }

  Json Job(const std::string& name) { return env.Get(*resource, "default", name); }
  Json Status(const std::string& name) {
    Json job = Job(name);
    return job.contains("status") ? job["status"] : Json::object();
  }
  std::string Latest(const std::string& name) {
    Json status = Status(name);
    if (!status.contains("conditions") || status["conditions"].empty()) return "-";
    const Json& c = status["conditions"].back();
    return c.value("type", "") + "(" + c.value("stage", "") + ")";
  }
  bool WaitLatest(const std::string& name, const std::string& want) {
    bool ok = Eventually([&] { return Latest(name) == want; });
    if (!ok) UNSCOPED_INFO("latest condition of " << name << ": " << Latest(name));
    return ok;
  }
  std::vector<Json> PodsOf(const std::string& worker_type) {
    std::vector<Json> out;
    for (const Json& pod : env.client().Objects(Pods())) {
      if (kube::Label(pod, api::LabelKeyWorkerType(kind)).value_or("") == worker_type &&
          !kube::IsBeingDeleted(pod)) {
        out.push_back(pod);
      }
    }
    return out;
  }
  std::optional<Json> WaitPod(const std::string& worker_type) {
    std::optional<Json> found;
    Eventually([&] {
      std::vector<Json> pods = PodsOf(worker_type);
      if (pods.size() == 1) found = pods.front();
      return found.has_value();
    });
    return found;
  }
  void SetPhase(const Json& pod, const std::string& phase) {
    Json current = env.Get(Pods(), kube::Namespace(pod), kube::Name(pod));
    current["status"]["phase"] = phase;
    if (phase == "Failed") {
      current["status"]["containerStatuses"] = Json::array(
          {{{"name", "c"}, {"state", {{"terminated", {{"exitCode", 1}}}}}, {"restartCount", 0}}});
    }
    REQUIRE(env.client().UpdateStatus(Pods(), current).ok());
  }
  // Waits until the informer cache has the job at the API's resourceVersion (reports read it).
  void WaitCached(const std::string& name) {
    const std::string rv = kube::ResourceVersion(Job(name));
    REQUIRE(Eventually([&] {
      auto cached = controller->informers()[0]->GetLister().Get("default", name);
      return cached.ok() && job::ResourceVersionAtLeast(kube::ResourceVersion(**cached), rv);
    }));
  }

  edge::v1::StatusReport Report(const std::string& name) {
    Json job = Job(name);
    edge::v1::StatusReport report;
    report.set_seq(++seq);
    report.mutable_ref()->set_kind(kind);
    report.mutable_ref()->set_namespace_("default");
    report.mutable_ref()->set_name(name);
    report.mutable_ref()->set_uid(kube::Uid(job));
    return report;
  }
  ReportOutcome Trigger(const std::string& name, const std::string& node, const std::string& stage,
                        const std::string& status, const edge::v1::StageInput& input = {}) {
    WaitCached(name);
    edge::v1::StatusReport report = Report(name);
    report.mutable_trigger()->set_stage(stage);
    report.mutable_trigger()->set_status(status);
    report.mutable_trigger()->set_reason("because");
    *report.mutable_trigger()->mutable_input() = input;
    return controller->HandleReport(node, report);
  }
  ReportOutcome Worker(const std::string& name, const std::string& node, const std::string& kind_of,
                       const Json& results) {
    edge::v1::StatusReport report = Report(name);
    report.mutable_worker()->set_worker_name(kind_of + "worker-x");
    report.mutable_worker()->set_worker_kind(kind_of);
    report.mutable_worker()->set_status("completed");
    report.mutable_worker()->set_results_json(results.dump());
    return controller->HandleReport(node, report);
  }
  std::optional<edge::v1::Resource> OnEdge(const std::string& node, const std::string& name) {
    return env.edge().Get(node, absl::StrCat(kind, "/default/", name));
  }

  uint64_t seq = 0;
};

edge::v1::StageInput TrainInput() {
  edge::v1::StageInput input;
  edge::v1::ModelInfo* m = input.add_models();
  m->set_format("pb");
  m->set_url("/models/initial/model.pb");
  input.set_data_url("/output/il/data/train/1/data.txt");
  input.set_output_dir("/output/il/train/1");
  return input;
}

edge::v1::StageInput EvalInput() {
  edge::v1::StageInput input;
  input.add_models()->set_url("/output/il/train/1/model.pb");
  input.add_models()->set_url("/models/deploy/model.pb");
  input.set_data_url("/output/il/data/eval/1/data.txt");
  return input;
}

bool IsAccepted(const ReportOutcome& o) { return o.code == ReportOutcome::Code::kAccepted; }

TEST_CASE("IL: a new job waits for the train trigger; its inference worker, edge spec and models") {
  Fixture f;
  f.env.Create(Il(), IlObject("il"));
  REQUIRE(f.WaitLatest("il", "Waiting(Train)"));
  Json status = f.Status("il");
  CHECK(status["stage"] == "Train");
  CHECK(status["stageState"] == "Waiting");
  CHECK(status["rounds"] == 0);
  CHECK(status.contains("startTime"));

  // The inference worker runs from the start (Sedna's createInferPod at first sync).
  std::optional<Json> infer = f.WaitPod("inference");
  REQUIRE(infer.has_value());
  const Json& pod = *infer;
  CHECK(kube::StringAt(pod, "metadata.generateName") == "il-inference-");
  std::optional<kube::OwnerReference> owner = kube::ControllerOf(pod);
  REQUIRE(owner.has_value());
  CHECK(owner->kind == "IncrementalLearningJob");
  CHECK(owner->uid == kube::Uid(f.Job("il")));
  CHECK(kube::Label(pod, "incrementallearningjob.sedna.io/name") == "il");
  CHECK(kube::Label(pod, "incrementallearningjob.sedna.io/uid") == kube::Uid(f.Job("il")));
  CHECK(pod["spec"]["hostNetwork"] == true);
  CHECK(pod["spec"]["nodeName"] == "edge-0");  // No nodeName in the template: the dataset's node.
  CHECK(EnvOf(pod, "JOB_NAME") == "il");
  CHECK(EnvOf(pod, "NAMESPACE") == "default");
  CHECK(EnvOf(pod, "LC_SERVER") == "http://localhost:9100");
  CHECK(EnvOf(pod, "MODEL_URL") == "/home/data/models/deploy/model.pb");
  CHECK(EnvOf(pod, "HEM_NAME") == "IBT");
  CHECK(EnvOf(pod, "HEM_PARAMETERS") == R"([{"key":"threshold_img","value":"0.9"}])");
  CHECK(EnvOf(pod, "MODEL_HOT_UPDATE") == "true");
  CHECK(EnvOf(pod, "MODEL_POLL_PERIOD_SECONDS") == "30");
  CHECK(EnvOf(pod, "MODEL_HOT_UPDATE_CONFIG") == "/model-hot-update/model_config.json");
  bool hot_volume = false;
  for (const Json& v : pod["spec"]["volumes"]) {
    if (v.value("name", "") == "sedna-model-hot-update-volume") {
      hot_volume = true;
      CHECK(v["hostPath"]["path"] ==
            "/var/lib/sedna/model-hot-update/default/incrementallearningjob/il");
      CHECK(v["hostPath"]["type"] == "DirectoryOrCreate");
    }
  }
  CHECK(hot_volume);
  bool hot_mount = false;
  for (const Json& m : pod["spec"]["containers"][0]["volumeMounts"]) {
    hot_mount = hot_mount || m.value("mountPath", "") == "/model-hot-update";
  }
  CHECK(hot_mount);

  // The dataset's node gets the job with its triggers and the current stage.
  REQUIRE(Eventually([&] { return f.OnEdge("edge-0", "il").has_value(); }));
  REQUIRE(Eventually([&] {
    return f.OnEdge("edge-0", "il")->incremental_learning_job().current().type() == "Waiting";
  }));
  const edge::v1::IncrementalLearningJobSpec spec =
      f.OnEdge("edge-0", "il")->incremental_learning_job();
  CHECK(spec.dataset().name() == "ds");
  CHECK(spec.dataset().train_prob() == Approx(0.8));
  CHECK(spec.train_trigger().condition().metric() == "num_of_samples");
  CHECK(spec.train_trigger().check_period_seconds() == 5);
  CHECK(spec.deploy_trigger().condition().metric() == "precision_delta");
  CHECK(spec.hot_update_enabled());
  CHECK(spec.poll_period_seconds() == 30);
  CHECK(spec.initial_model_name() == "initial");
  CHECK(spec.deploy_model_name() == "deploy");
  CHECK(spec.current().stage() == "Train");
  CHECK(spec.stage_nodes().train() == "edge-0");
  CHECK(spec.stage_nodes().deploy() == "edge-0");
  CHECK(f.models.NeedSet("IncrementalLearningJob/default/il") ==
        std::set<ModelNeed>{{"default/deploy", "edge-0"}, {"default/initial", "edge-0"}});

  // A deleted inference worker is recreated.
  f.env.Delete(Pods(), "default", kube::Name(pod));
  REQUIRE(Eventually([&] {
    std::vector<Json> pods = f.PodsOf("inference");
    return pods.size() == 1 && kube::Name(pods[0]) != kube::Name(pod);
  }));
}

TEST_CASE("IL: a full round Train -> Eval -> Deploy (hot update) with pods, outputs and cleanup") {
  Fixture f;
  f.env.Create(Il(), IlObject("il"));
  REQUIRE(f.WaitLatest("il", "Waiting(Train)"));

  // The train trigger fired on the dataset's node.
  CHECK(IsAccepted(f.Trigger("il", "edge-0", "Train", "Ready", TrainInput())));
  REQUIRE(f.WaitLatest("il", "Starting(Train)"));
  std::optional<Json> train = f.WaitPod("train");
  REQUIRE(train.has_value());
  const Json& pod = *train;
  CHECK(kube::Name(pod) == "il-train-0");
  CHECK(kube::Label(pod, "incrementallearningjob.sedna.io/worker-type") == "train");
  CHECK(kube::Label(pod, std::string(job::labels::kTaskName)) == "train");
  CHECK(kube::Label(pod, "nereid.io/stage-run") == "1");
  CHECK(pod["spec"]["hostNetwork"] == true);
  CHECK(pod["spec"]["restartPolicy"] == "OnFailure");
  CHECK(pod["spec"]["nodeName"] == "edge-0");
  CHECK(kube::ControllerOf(pod)->kind == "IncrementalLearningJob");
  CHECK(EnvOf(pod, "JOB_NAME") == "il");
  CHECK(EnvOf(pod, "WORKER_NAME").rfind("trainworker-", 0) == 0);
  CHECK(EnvOf(pod, "BASE_MODEL_URL") == "/home/data/models/initial/model.pb");
  CHECK(EnvOf(pod, "MODEL_URL") == "/home/data/output/il/train/1");
  CHECK(EnvOf(pod, "TRAIN_DATASET_URL") == "/home/data/output/il/data/train/1/data.txt");
  CHECK(EnvOf(pod, "ORIGINAL_DATASET_URL") == "/home/data/data/train/train.txt");
  CHECK(EnvOf(pod, "DATA_PATH_PREFIX") == "/home/data");
  Json data = ParseStageData(f.Status("il")["conditions"].back().value("data", ""));
  CHECK(data["input"]["outputDir"] == "/output/il/train/1");
  CHECK(f.Status("il")["stagePods"]["run"] == 1);
  CHECK(f.Status("il")["stagePods"]["stage"] == "Train");

  f.SetPhase(pod, "Running");
  REQUIRE(f.WaitLatest("il", "Running(Train)"));
  CHECK(f.Status("il")["stageNodes"]["train"] == "edge-0");

  // The train worker reports its output model (relayed by the LC), then exits.
  Json trained = Json::array({{{"format", "pb"}, {"url", "/output/il/train/1/model.pb"}}});
  CHECK(IsAccepted(f.Worker("il", "edge-0", "train", trained)));
  f.SetPhase(pod, "Succeeded");
  REQUIRE(f.WaitLatest("il", "Waiting(Eval)"));
  Json status = f.Status("il");
  CHECK(status["rounds"] == 1);
  // The train pod is gone once its stage is over (Sedna left it behind).
  REQUIRE(Eventually([&] { return f.PodsOf("train").empty(); }));
  // The LC gets the train output while Eval waits.
  REQUIRE(Eventually([&] {
    auto r = f.OnEdge("edge-0", "il");
    return r.has_value() && r->incremental_learning_job().current().stage() == "Eval" &&
           r->incremental_learning_job().current().output().models_size() == 1;
  }));
  CHECK(f.OnEdge("edge-0", "il")->incremental_learning_job().current().output().models(0).url() ==
        "/output/il/train/1/model.pb");

  // Eval: Ready → pod with the models to compare; it succeeds without reporting metrics.
  CHECK(IsAccepted(f.Trigger("il", "edge-0", "Eval", "Ready", EvalInput())));
  std::optional<Json> eval = f.WaitPod("eval");
  REQUIRE(eval.has_value());
  CHECK(kube::Name(*eval) == "il-eval-0");
  CHECK(EnvOf(*eval, "MODEL_URLS") ==
        "/home/data/output/il/train/1/model.pb;/home/data/models/deploy/model.pb");
  CHECK(EnvOf(*eval, "TEST_DATASET_URL") == "/home/data/output/il/data/eval/1/data.txt");
  f.SetPhase(*eval, "Succeeded");
  REQUIRE(f.WaitLatest("il", "Completed(Eval)"));
  // No output reported: the next stage waits for it (bounded) instead of starting blind.
  f.env.clock().Advance(absl::Seconds(10));
  CHECK(f.Latest("il") == "Completed(Eval)");
  Json metrics = Json::array({{{"url", "/output/il/train/1/model.pb"},
                               {"metrics", {{"precision", {0.9}}}}},
                              {{"url", "/models/deploy/model.pb"}, {"metrics", {{"precision", {0.8}}}}}});
  CHECK(IsAccepted(f.Worker("il", "edge-0", "eval", metrics)));
  REQUIRE(f.WaitLatest("il", "Waiting(Deploy)"));
  REQUIRE(Eventually([&] { return f.PodsOf("eval").empty(); }));
  REQUIRE(Eventually([&] {
    auto r = f.OnEdge("edge-0", "il");
    return r.has_value() && r->incremental_learning_job().current().stage() == "Deploy" &&
           r->incremental_learning_job().current().output().models_size() == 2;
  }));
  const edge::v1::ModelInfo m0 =
      f.OnEdge("edge-0", "il")->incremental_learning_job().current().output().models(0);
  REQUIRE(m0.metrics().count("precision") == 1);
  CHECK(m0.metrics().at("precision").values(0) == Approx(0.9));

  // Deploy: the trigger fired; the deploy node installs the model; hot update → Completed.
  std::string infer_before = kube::Name(*f.WaitPod("inference"));
  CHECK(IsAccepted(f.Trigger("il", "edge-0", "Deploy", "Ready", EvalInput())));
  REQUIRE(f.WaitLatest("il", "Starting(Deploy)"));
  CHECK(IsAccepted(f.Trigger("il", "edge-0", "Deploy", "Installed")));
  REQUIRE(Eventually([&] {
    Json st = f.Status("il");
    for (const Json& c : st["conditions"]) {
      if (c["stage"] == "Deploy" && c["type"] == "Completed") return true;
    }
    return false;
  }));
  REQUIRE(f.WaitLatest("il", "Waiting(Train)"));
  CHECK(f.Status("il")["modelUpdates"] == 1);
  // Hot update: the inference worker keeps running.
  CHECK(kube::Name(*f.WaitPod("inference")) == infer_before);

  // The history stays bounded and Events tell the story.
  CHECK(f.Status("il")["conditions"].size() <= api::kMaxConditions);
  REQUIRE(Eventually([&] { return !f.env.Events("il", "TrainRunning").empty(); }));
  REQUIRE(Eventually([&] { return !f.env.Events("il", "DeployCompleted").empty(); }));
}

TEST_CASE("IL with an s3 outputDir: the job's Secret by secretKeyRef, inputs via the initializer") {
  Fixture f;
  f.env.Create(kube::resources::Secrets(), testing::SednaS3Secret("mysecret", "DoNotLeak-il"));
  Json il = IlObject("il");
  il["spec"]["outputDir"] = "s3://bucket/il";
  il["spec"]["credentialName"] = "mysecret";
  f.env.Create(Il(), il);
  REQUIRE(f.WaitLatest("il", "Waiting(Train)"));
  edge::v1::StageInput input = TrainInput();
  input.set_data_url("s3://bucket/il/data/train/1/data.txt");
  input.set_output_dir("s3://bucket/il/train/1");
  CHECK(IsAccepted(f.Trigger("il", "edge-0", "Train", "Ready", input)));
  std::optional<Json> train = f.WaitPod("train");
  REQUIRE(train.has_value());
  const Json& pod = *train;
  CHECK(EnvOf(pod, "MODEL_URL") == "s3://bucket/il/train/1");  // The output: as is.
  CHECK(EnvOf(pod, "TRAIN_DATASET_URL") == "/downloads/bucket/il/data/train/1/data.txt");
  CHECK(EnvOf(pod, "S3_ENDPOINT_URL") == "http://127.0.0.1:9000");
  bool by_reference = false;
  for (const Json& e : pod["spec"]["containers"][0]["env"]) {
    if (e["name"] == "SECRET_ACCESS_KEY") {
      by_reference = e["valueFrom"]["secretKeyRef"]["name"] == "mysecret";
    }
  }
  CHECK(by_reference);
  REQUIRE(pod["spec"]["initContainers"].size() == 1);
  CHECK(pod["spec"]["initContainers"][0]["name"] == "storage-initializer");
  CHECK(pod.dump().find("DoNotLeak-il") == std::string::npos);
}

// The SpecValid entry of the job's jobConditions ({} when none).
Json SpecValidOf(const Json& status) {
  if (!status.is_object()) return Json::object();
  for (const Json& c : status.value("jobConditions", Json::array())) {
    if (c.value("type", "") == "SpecValid") return c;
  }
  return Json::object();
}

TEST_CASE("IL: the inference worker of an s3 deploy Model gets that Model's Secret") {
  Fixture f;
  f.env.Create(kube::resources::Secrets(), testing::SednaS3Secret("modelsecret", "DoNotLeak-m"));
  Json model = ModelObject("s3deploy", "s3://bucket/deploy/model.pb");
  model["spec"]["credentialName"] = "modelsecret";
  f.env.Create(api::resources::Models(), model);
  Json il = IlObject("il");
  il["spec"]["deploySpec"]["model"]["name"] = "s3deploy";
  il["spec"]["credentialName"] = "jobsecret";  // Not the one the deploy Model names.
  f.env.Create(Il(), il);
  std::optional<Json> infer = f.WaitPod("inference");
  REQUIRE(infer.has_value());
  const Json& pod = *infer;
  CHECK(EnvOf(pod, "MODEL_URL") == "/downloads/bucket/deploy/model.pb");
  REQUIRE(pod["spec"]["initContainers"].size() == 1);
  const Json& init = pod["spec"]["initContainers"][0];
  CHECK(init["name"] == "storage-initializer");
  CHECK(init["args"] == Json::array({"s3://bucket/deploy/model.pb", "/downloads/bucket/deploy/"}));
  bool by_reference = false;
  for (const Json& e : init["env"]) {
    if (e["name"] == "ACCESS_KEY_ID") {
      by_reference = e["valueFrom"]["secretKeyRef"]["name"] == "modelsecret";
    }
  }
  CHECK(by_reference);
  CHECK(pod.dump().find("DoNotLeak-m") == std::string::npos);
}

TEST_CASE("IL: a stage whose Secret is Forbidden, then missing, waits; then runs") {
  Fixture f;
  Json il = IlObject("il");
  il["spec"]["outputDir"] = "s3://bucket/il";
  il["spec"]["credentialName"] = "mysecret";
  f.env.Create(Il(), il);
  REQUIRE(f.WaitLatest("il", "Waiting(Train)"));
  f.env.client().FailNext(fakes::Verb::kGet, 1000, kube::StatusFromResponse(403, ""), "secrets");
  edge::v1::StageInput input = TrainInput();
  input.set_output_dir("s3://bucket/il/train/1");
  CHECK(IsAccepted(f.Trigger("il", "edge-0", "Train", "Ready", input)));
  REQUIRE(Eventually(
      [&] { return SpecValidOf(f.Status("il")).value("reason", "") == "CredentialsForbidden"; }));
  CHECK(SpecValidOf(f.Status("il"))["status"] == "False");
  REQUIRE(Eventually([&] { return f.env.Events("il", "CredentialsForbidden").size() == 1; }));
  CHECK(f.WaitLatest("il", "Starting(Train)"));  // Waiting on the Secret, not failed.
  CHECK(f.PodsOf("train").empty());

  // Allowed now; the Secret does not exist yet.
  f.env.client().ClearFailures();
  f.env.clock().Advance(kCredentialRecheckPeriod + absl::Seconds(1));
  REQUIRE(Eventually(
      [&] { return SpecValidOf(f.Status("il")).value("reason", "") == "CredentialsNotFound"; }));
  CHECK(f.PodsOf("train").empty());
  CHECK(f.WaitLatest("il", "Starting(Train)"));

  f.env.Create(kube::resources::Secrets(), testing::SednaS3Secret("mysecret", "DoNotLeak-il"));
  f.env.clock().Advance(kCredentialRecheckPeriod + absl::Seconds(1));
  std::optional<Json> train = f.WaitPod("train");
  REQUIRE(train.has_value());
  CHECK(EnvOf(*train, "MODEL_URL") == "s3://bucket/il/train/1");
  REQUIRE(Eventually([&] { return SpecValidOf(f.Status("il")).value("status", "") == "True"; }));
  const Json status = f.Status("il");  // a named copy: the loop must not outlive a temporary
  for (const Json& c : status["conditions"]) CHECK(c["type"] != "Failed");
}

TEST_CASE("IL without hot update: a deploy restarts the inference worker with the new model") {
  Fixture f;
  f.env.Create(Il(), IlObject("il", /*hot_update=*/false));
  REQUIRE(f.WaitLatest("il", "Waiting(Train)"));
  std::optional<Json> first = f.WaitPod("inference");
  REQUIRE(first.has_value());
  CHECK(EnvOf(*first, "MODEL_HOT_UPDATE") == "<unset>");
  f.SetPhase(*first, "Running");

  // Drive to Waiting(Deploy) quickly: train and eval succeed with outputs.
  REQUIRE(IsAccepted(f.Trigger("il", "edge-0", "Train", "Ready", TrainInput())));
  std::optional<Json> train = f.WaitPod("train");
  REQUIRE(train.has_value());
  REQUIRE(IsAccepted(f.Worker("il", "edge-0", "train",
                              Json::array({{{"url", "/output/il/train/1/model.pb"}}}))));
  f.SetPhase(*train, "Succeeded");
  REQUIRE(f.WaitLatest("il", "Waiting(Eval)"));
  REQUIRE(IsAccepted(f.Trigger("il", "edge-0", "Eval", "Ready", EvalInput())));
  std::optional<Json> eval = f.WaitPod("eval");
  REQUIRE(eval.has_value());
  REQUIRE(IsAccepted(f.Worker("il", "edge-0", "eval", Json::array({{{"url", "a"}}, {{"url", "b"}}}))));
  f.SetPhase(*eval, "Succeeded");
  REQUIRE(f.WaitLatest("il", "Waiting(Deploy)"));

  REQUIRE(IsAccepted(f.Trigger("il", "edge-0", "Deploy", "Ready", EvalInput())));
  REQUIRE(f.WaitLatest("il", "Starting(Deploy)"));
  REQUIRE(IsAccepted(f.Trigger("il", "edge-0", "Deploy", "Installed")));
  REQUIRE(f.WaitLatest("il", "Running(Deploy)"));
  // The old worker is replaced by one built for the new model.
  std::optional<Json> second;
  REQUIRE(Eventually([&] {
    std::vector<Json> pods = f.PodsOf("inference");
    if (pods.size() == 1 && kube::Name(pods[0]) != kube::Name(*first)) second = pods[0];
    return second.has_value();
  }));
  CHECK(kube::Annotation(*second, "nereid.io/template-hash") !=
        kube::Annotation(*first, "nereid.io/template-hash"));
  CHECK(f.Latest("il") == "Running(Deploy)");  // Until the new worker runs.
  f.SetPhase(*second, "Running");
  REQUIRE(f.WaitLatest("il", "Waiting(Train)"));
  CHECK(f.Status("il")["rounds"] == 1);
}

TEST_CASE("IL: the deploy trigger did not fire, or the LC cannot prepare a stage") {
  Fixture f;
  f.env.Create(Il(), IlObject("il"));
  REQUIRE(f.WaitLatest("il", "Waiting(Train)"));
  // A report for another stage than the current one is stale: accepted, nothing changes.
  CHECK(IsAccepted(f.Trigger("il", "edge-0", "Eval", "Ready", EvalInput())));
  CHECK(f.Latest("il") == "Waiting(Train)");
  // The LC could not prepare training (e.g. the output directory is not writable).
  CHECK(IsAccepted(f.Trigger("il", "edge-0", "Train", "Failed")));
  REQUIRE(Eventually([&] {
    const Json status = f.Status("il");
    for (const Json& c : status["conditions"]) {
      if (c["type"] == "Failed") return c["reason"] == "PreparationFailed";
    }
    return false;
  }));
  REQUIRE(f.WaitLatest("il", "Waiting(Train)"));
  REQUIRE(Eventually([&] { return !f.env.Events("il", "TrainFailed").empty(); }));
}

TEST_CASE("IL: trigger reports are refused from a node without that role") {
  Fixture f;
  f.env.Create(Il(), IlObject("il"));
  REQUIRE(f.WaitLatest("il", "Waiting(Train)"));
  ReportOutcome out = f.Trigger("il", "edge-9", "Train", "Ready", TrainInput());
  CHECK(out.code == ReportOutcome::Code::kRejected);
  CHECK(out.reason == "NotThisNode");
  CHECK(f.Latest("il") == "Waiting(Train)");
  // A report about a job that is gone (or re-created: another uid) is rejected for good.
  edge::v1::StatusReport report = f.Report("il");
  report.mutable_ref()->set_uid("not-the-uid");
  report.mutable_trigger()->set_stage("Train");
  report.mutable_trigger()->set_status("Ready");
  out = f.controller->HandleReport("edge-0", report);
  CHECK(out.code == ReportOutcome::Code::kRejected);
  CHECK(out.reason == "ObjectGone");
}

TEST_CASE("IL: a failed stage pod (restartPolicy Never) fails the stage and goes back to Train") {
  Fixture f;
  Json job = IlObject("il");
  job["spec"]["trainSpec"]["template"]["spec"]["restartPolicy"] = "Never";
  f.env.Create(Il(), job);
  REQUIRE(f.WaitLatest("il", "Waiting(Train)"));
  REQUIRE(IsAccepted(f.Trigger("il", "edge-0", "Train", "Ready", TrainInput())));
  std::optional<Json> train = f.WaitPod("train");
  REQUIRE(train.has_value());
  CHECK((*train)["spec"]["restartPolicy"] == "Never");  // The user's value wins.
  f.SetPhase(*train, "Failed");
  REQUIRE(f.WaitLatest("il", "Waiting(Train)"));
  Json status = f.Status("il");
  bool failed = false;
  for (const Json& c : status["conditions"]) {
    if (c["stage"] == "Train" && c["type"] == "Failed") {
      failed = true;
      CHECK(c["reason"] == "StageRunFailed");
    }
  }
  CHECK(failed);
  CHECK(status["rounds"] == 0);
  CHECK(status["stagePods"]["phase"] == "Failed");
  REQUIRE(Eventually([&] { return f.PodsOf("train").empty(); }));

  // The next round runs a fresh pod under the same name, numbered as run 2.
  REQUIRE(IsAccepted(f.Trigger("il", "edge-0", "Train", "Ready", TrainInput())));
  std::optional<Json> again;
  REQUIRE(Eventually([&] {
    std::vector<Json> pods = f.PodsOf("train");
    if (pods.size() == 1 && kube::Label(pods[0], "nereid.io/stage-run") == "2") again = pods[0];
    return again.has_value();
  }));
  CHECK(kube::Name(*again) == "il-train-0");
}

TEST_CASE("IL: runPolicy.cleanPodPolicy None keeps finished stage pods until the stage runs again") {
  Fixture f;
  Json job = IlObject("il");
  job["spec"]["runPolicy"] = {{"cleanPodPolicy", "None"}};
  f.env.Create(Il(), job);
  REQUIRE(f.WaitLatest("il", "Waiting(Train)"));
  REQUIRE(IsAccepted(f.Trigger("il", "edge-0", "Train", "Ready", TrainInput())));
  std::optional<Json> train = f.WaitPod("train");
  REQUIRE(train.has_value());
  REQUIRE(IsAccepted(f.Worker("il", "edge-0", "train", Json::array({{{"url", "/m.pb"}}}))));
  f.SetPhase(*train, "Succeeded");
  REQUIRE(f.WaitLatest("il", "Waiting(Eval)"));
  f.env.clock().Advance(absl::Seconds(1));
  CHECK(f.PodsOf("train").size() == 1);  // Kept for its logs.
}

TEST_CASE("IL: stages on different nodes (Sedna #67)") {
  Fixture f;
  Json job = IlObject("il");
  job["spec"]["trainSpec"]["template"]["spec"]["nodeName"] = "edge-1";
  job["spec"]["evalSpec"]["template"]["spec"]["nodeName"] = "edge-2";
  job["spec"]["deploySpec"]["template"]["spec"]["nodeName"] = "edge-3";
  f.env.Create(Il(), job);
  REQUIRE(f.WaitLatest("il", "Waiting(Train)"));
  std::optional<Json> infer = f.WaitPod("inference");
  REQUIRE(infer.has_value());
  CHECK((*infer)["spec"]["nodeName"] == "edge-3");
  // Every stage node holds the job (its LC relays the workers' reports; the deploy node installs).
  for (const char* node : {"edge-0", "edge-1", "edge-2", "edge-3"}) {
    INFO(node);
    REQUIRE(Eventually([&] { return f.OnEdge(node, "il").has_value(); }));
  }
  const edge::v1::StageNodes nodes = f.OnEdge("edge-0", "il")->incremental_learning_job().stage_nodes();
  CHECK(nodes.train() == "edge-1");
  CHECK(nodes.eval() == "edge-2");
  CHECK(nodes.deploy() == "edge-3");
  CHECK(f.models.NeedSet("IncrementalLearningJob/default/il") ==
        std::set<ModelNeed>{{"default/deploy", "edge-0"},
                            {"default/deploy", "edge-2"},
                            {"default/deploy", "edge-3"},
                            {"default/initial", "edge-0"},
                            {"default/initial", "edge-1"}});
  REQUIRE(IsAccepted(f.Trigger("il", "edge-0", "Train", "Ready", TrainInput())));
  std::optional<Json> train = f.WaitPod("train");
  REQUIRE(train.has_value());
  CHECK((*train)["spec"]["nodeName"] == "edge-1");
  // Only the deploy node may say the model is installed.
  f.SetPhase(*train, "Succeeded");
}

TEST_CASE("IL: invalid specs are refused with SpecValid=False, an Event and no pods") {
  struct Case {
    std::string name;
    std::function<void(Json*)> mutate;
    std::string field;
  };
  const std::vector<Case> cases = {
      {"no-containers",
       [](Json* j) { (*j)["spec"]["trainSpec"]["template"]["spec"]["containers"] = Json::array(); },
       "spec.trainSpec.template"},
      {"bad-operator",
       [](Json* j) { (*j)["spec"]["trainSpec"]["trigger"]["condition"]["operator"] = "=>"; },
       "spec.trainSpec.trigger"},
      {"bad-timer",
       [](Json* j) {
         (*j)["spec"]["deploySpec"]["trigger"]["timer"] = {{"start", "25:00"}, {"end", "01:00"}};
       },
       "spec.deploySpec.trigger.timer"},
      {"selector-label",
       [](Json* j) {
         (*j)["spec"]["evalSpec"]["template"]["metadata"]["labels"]
             ["incrementallearningjob.sedna.io/name"] = "other";
       },
       "spec.evalSpec.template.metadata.labels"},
      {"ttl",
       [](Json* j) { (*j)["spec"]["runPolicy"] = {{"ttlSecondsAfterFinished", 10}}; },
       "spec.runPolicy.ttlSecondsAfterFinished"},
      {"bad-outputdir", [](Json* j) { (*j)["spec"]["outputDir"] = "relative/dir"; }, "spec.outputDir"},
      {"bad-affinity",
       [](Json* j) {
         (*j)["spec"]["trainSpec"]["template"]["spec"]["affinity"] = {
             {"nodeAffinity",
              {{"requiredDuringSchedulingIgnoredDuringExecution",
                {{"nodeSelectorTerms",
                  Json::array({{{"matchExpressions",
                                 Json::array({{{"key", "a"}, {"operator", "Near"}}})}}})}}}}}};
       },
       "spec.trainSpec.template.spec"},
  };
  Fixture f;
  for (const Case& c : cases) {
    Json job = IlObject(c.name);
    c.mutate(&job);
    f.env.Create(Il(), job);
  }
  for (const Case& c : cases) {
    INFO(c.name);
    REQUIRE(Eventually([&] {
      Json status = f.Status(c.name);
      return status.value("reason", "") == "InvalidSpec";
    }));
    Json status = f.Status(c.name);
    CHECK(status["message"].get<std::string>().find(c.field) != std::string::npos);
    REQUIRE(status.contains("jobConditions"));
    CHECK(status["jobConditions"][0]["type"] == "SpecValid");
    CHECK(status["jobConditions"][0]["status"] == "False");
    CHECK_FALSE(status.contains("conditions"));  // No stage started.
    REQUIRE(Eventually([&] { return f.env.Events(c.name, "InvalidSpec").size() == 1; }));
    CHECK_FALSE(f.OnEdge("edge-0", c.name).has_value());
  }
  CHECK(f.PodsOf("inference").empty());
  CHECK(f.PodsOf("train").empty());

  // Fixing the spec clears the condition and the job starts.
  f.env.Patch(Il(), "default", "ttl", {{"spec", {{"runPolicy", nullptr}}}});
  REQUIRE(f.WaitLatest("ttl", "Waiting(Train)"));
  Json status = f.Status("ttl");
  CHECK(status["jobConditions"][0]["status"] == "True");
  CHECK_FALSE(status.contains("reason"));
}

TEST_CASE("IL: a missing Dataset or Model is waited for, then the job starts") {
  Fixture f(/*lifelong=*/false, /*with_dataset=*/false);
  f.env.Create(Il(), IlObject("il"));
  REQUIRE(Eventually([&] { return f.Status("il").value("reason", "") == "DatasetNotFound"; }));
  CHECK(f.PodsOf("inference").empty());
  REQUIRE(Eventually([&] { return f.env.Events("il", "DatasetNotFound").size() == 1; }));
  f.env.Create(api::resources::Datasets(), DatasetObject("ds", "edge-0", "/data/train/train.txt"));
  REQUIRE(f.WaitLatest("il", "Waiting(Train)"));
  CHECK_FALSE(f.Status("il").contains("reason"));
  CHECK(f.WaitPod("inference").has_value());

  Json other = IlObject("il2");
  other["spec"]["deploySpec"]["model"]["name"] = "later";
  f.env.Create(Il(), other);
  REQUIRE(Eventually([&] { return f.Status("il2").value("reason", "") == "ModelNotFound"; }));
  f.env.Create(api::resources::Models(), ModelObject("later", "/models/later.pb"));
  REQUIRE(f.WaitLatest("il2", "Waiting(Train)"));
}

TEST_CASE("IL: deleting the job withdraws it from the edge and releases its models") {
  Fixture f;
  f.env.Create(Il(), IlObject("il"));
  REQUIRE(Eventually([&] { return f.OnEdge("edge-0", "il").has_value(); }));
  f.env.Delete(Il(), "default", "il");
  // Withdrawn from the edge first, then the model needs are released (just after): wait for both.
  REQUIRE(Eventually([&] {
    return !f.OnEdge("edge-0", "il").has_value() &&
           f.models.NeedSet("IncrementalLearningJob/default/il").empty() &&
           f.controller->PlacedNodes("default/il").empty();
  }));
}

TEST_CASE("LL: pods get KB env, the inference worker starts with the first deploy, KB status") {
  Fixture f(/*lifelong=*/true);
  f.env.Create(Ll(), LlObject("ll"));
  REQUIRE(f.WaitLatest("ll", "Waiting(Train)"));
  REQUIRE(Eventually([&] { return f.OnEdge("edge-0", "ll").has_value(); }));
  CHECK(f.OnEdge("edge-0", "ll")->lifelong_learning_job().train_trigger().condition().metric() ==
        "num_of_samples");
  f.env.clock().Advance(absl::Seconds(1));
  CHECK(f.PodsOf("inference").empty());  // Nothing to serve yet.

  edge::v1::StageInput input;
  input.set_data_url("/output/ll/data/train/1/data.txt");
  input.set_output_dir("/output/ll/train/1");
  REQUIRE(IsAccepted(f.Trigger("ll", "edge-0", "Train", "Ready", input)));
  std::optional<Json> train = f.WaitPod("train");
  REQUIRE(train.has_value());
  CHECK(EnvOf(*train, "KB_SERVER") == "http://kb.sedna:9020");
  CHECK(EnvOf(*train, "HAS_COMPLETED_INITIAL_TRAINING") == "false");
  CHECK(EnvOf(*train, "CLOUD_KB_INDEX") == "<unset>");
  CHECK(EnvOf(*train, "OUTPUT_URL") == "/home/data/output/ll/train/1");
  CHECK((*train)["spec"]["dnsPolicy"] == "ClusterFirstWithHostNet");

  Json kb_models = Json::array(
      {{{"url", "/output/ll/train/1/index.pkl"},
        {"classes", Json::array({"hot", "cold"})},
        {"current_metric", {{"task-0", {{"precision", 0.75}}}, {"task-1", {{"precision", 0.5}}}}},
        {"number_of_labeled_unseen_sample", 12}}});
  REQUIRE(IsAccepted(f.Worker("ll", "edge-0", "train", kb_models)));
  REQUIRE(Eventually([&] { return f.Status("ll").contains("knowledgeBase"); }));
  Json kb = f.Status("ll")["knowledgeBase"];
  CHECK(kb["AIModels"]["numberOfAIModels"] == 2);
  CHECK(kb["AIModels"]["listOfAIModels"][0]["modelID"] == "task-0");
  CHECK(kb["AIModels"]["listOfAIModels"][0]["averagePrecision"] == Approx(0.75));
  CHECK(kb["AIModels"]["listOfAIModels"][0]["numberOfTrainSamples"] == 12);
  CHECK(kb["AIClasses"]["numberOfAIClasses"] == 2);
  CHECK(kb["samples"]["numberOfLabeledUnseenSample"] == 12);

  f.SetPhase(*train, "Succeeded");
  REQUIRE(f.WaitLatest("ll", "Waiting(Eval)"));
  // The knowledge base survives the controller's own status writes.
  CHECK(f.Status("ll").contains("knowledgeBase"));
  edge::v1::StageInput eval_input;
  eval_input.add_models()->set_url("/output/ll/train/1/index.pkl");
  eval_input.set_data_url("/output/ll/data/eval/1/data.txt");
  eval_input.set_output_dir("/output/ll/eval/1");
  REQUIRE(IsAccepted(f.Trigger("ll", "edge-0", "Eval", "Ready", eval_input)));
  std::optional<Json> eval = f.WaitPod("eval");
  REQUIRE(eval.has_value());
  CHECK(EnvOf(*eval, "MODEL_URLS") == "/home/data/output/ll/train/1/index.pkl");
  CHECK(EnvOf(*eval, "KB_SERVER") == "http://kb.sedna:9020");
  REQUIRE(IsAccepted(f.Worker("ll", "edge-0", "eval", kb_models)));
  f.SetPhase(*eval, "Succeeded");
  REQUIRE(f.WaitLatest("ll", "Waiting(Deploy)"));
  REQUIRE(IsAccepted(f.Trigger("ll", "edge-0", "Deploy", "Ready", eval_input)));
  REQUIRE(f.WaitLatest("ll", "Starting(Deploy)"));
  REQUIRE(IsAccepted(f.Trigger("ll", "edge-0", "Deploy", "Installed")));
  REQUIRE(f.WaitLatest("ll", "Running(Deploy)"));
  std::optional<Json> infer = f.WaitPod("inference");
  REQUIRE(infer.has_value());
  CHECK(EnvOf(*infer, "MODEL_URLS") == "/home/data/output/ll/deploy/index.pkl");
  f.SetPhase(*infer, "Running");
  REQUIRE(f.WaitLatest("ll", "Waiting(Train)"));

  // The second round's train pod knows the knowledge base exists.
  REQUIRE(IsAccepted(f.Trigger("ll", "edge-0", "Train", "Ready", input)));
  REQUIRE(Eventually([&] {
    std::vector<Json> pods = f.PodsOf("train");
    // Runs are numbered across stages: train 1, eval 2, train 3.
    return pods.size() == 1 && kube::Label(pods[0], "nereid.io/stage-run") == "3";
  }));
  Json second = f.PodsOf("train")[0];
  CHECK(EnvOf(second, "HAS_COMPLETED_INITIAL_TRAINING") == "true");
  CHECK(EnvOf(second, "CLOUD_KB_INDEX") == "/output/ll/train/1/index.pkl");
}

TEST_CASE("KnowledgeBaseFromModels follows Sedna's updateStatusKnowledgeBase") {
  CHECK_FALSE(KnowledgeBaseFromModels(Json::array()).has_value());
  Json models = Json::array({{{"classes", Json::array({"a"})},
                              {"current_metric", {{"m1", {{"acc", 0.5}, {"f1", 0.1}}}}},
                              {"number_of_labeled_unseen_sample", 3}},
                             {{"current_metric", {{"m2", {{"acc", 0.25}}}}},
                              {"number_of_labeled_unseen_sample", 4}}});
  std::optional<Json> kb = KnowledgeBaseFromModels(models);
  REQUIRE(kb.has_value());
  CHECK((*kb)["AIModels"]["numberOfAIModels"] == 2);
  CHECK((*kb)["AIModels"]["listOfAIModels"][1]["modelID"] == "m2");
  CHECK((*kb)["AIModels"]["listOfAIModels"][1]["numberOfTrainSamples"] == 4);
  CHECK((*kb)["AIClasses"]["listOfAIClasses"] == Json::array({"a"}));
  CHECK((*kb)["samples"]["numberOfLabeledUnseenSample"] == 7);
  CHECK((*kb)["samples"]["numberOfUnseenSample"] == 0);
}

TEST_CASE("stage data: bounded, tolerant of junk, round-trips through the edge protocol") {
  CHECK(ParseStageData("").empty());
  CHECK(ParseStageData("{not json").empty());
  CHECK(ParseStageData("[1,2]").empty());
  CHECK_FALSE(ModelsFromResults("{\"url\":1}").has_value());
  CHECK(ModelsFromResults("null")->empty());
  CHECK(ModelsFromResults("[1, {\"url\": \"a\"}]")->size() == 1);
  Json many = Json::array();
  for (int i = 0; i < 40; ++i) many.push_back({{"url", absl::StrCat("/m", i)}});
  CHECK(ModelsFromResults(many.dump())->size() == kMaxModels);

  Json big = {{"input", {{"dataURL", "/d"}}},
              {"output", {{"models", Json::array({{{"url", "/m"},
                                                    {"format", "pb"},
                                                    {"junk", std::string(40000, 'x')}}})}}}};
  Json back = ParseStageData(DumpStageData(big));
  CHECK(back["output"]["models"][0]["url"] == "/m");
  CHECK_FALSE(back["output"]["models"][0].contains("junk"));

  edge::v1::StageInput in = TrainInput();
  in.mutable_models(0)->mutable_metrics()->insert({"precision", edge::v1::MetricValue()});
  (*in.mutable_models(0)->mutable_metrics())["precision"].add_values(0.5);
  Json json = InputFromProto(in);
  edge::v1::StageInput out;
  InputToProto(json, &out);
  CHECK(out.data_url() == in.data_url());
  CHECK(out.output_dir() == in.output_dir());
  CHECK(out.models(0).url() == "/models/initial/model.pb");
  CHECK(out.models(0).metrics().at("precision").values(0) == Approx(0.5));
  // Metric values as numbers, numeric strings or lists.
  edge::v1::ModelInfo info;
  ModelToProto({{"url", "u"}, {"metrics", {{"a", 1}, {"b", "0.5"}, {"c", {1, 2}}, {"d", "x"}}}},
               &info);
  CHECK(info.metrics().at("a").values_size() == 1);
  CHECK(info.metrics().at("b").values(0) == Approx(0.5));
  CHECK(info.metrics().at("c").values_size() == 2);
  CHECK(info.metrics().count("d") == 0);
}

}  // namespace
}  // namespace nereid::gm
