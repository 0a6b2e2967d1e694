// The pure parts of the FederatedLearningJob controller: the plan (tasks, templates, placement,
// invalid specs, spec hash, per-node edge spec) and the status mapping (phase, bounded conditions,
// rounds, model metrics).

#include "globalmanager/controllers/federated_learning_plan.h"

#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/api/common_types.h"
#include "common/api/sedna_contract.h"
#include "common/job/conditions.h"
#include "common/job/job_validation.h"
#include "common/job/pod_builder.h"
#include "globalmanager/controllers/federated_learning_status.h"
#include "globalmanager/controllers/placement.h"

namespace nereid::gm {
namespace {

using kube::Json;

Json Object(const std::string& kind, const std::string& name, Json spec) {
  return {{"apiVersion", std::string(api::kApiVersion)},
          {"kind", kind},
          {"metadata", {{"name", name}, {"namespace", "ns1"}, {"uid", "uid-" + name}}},
          {"spec", std::move(spec)}};
}

Json Training(const std::string& dataset, Json pod_spec) {
  pod_spec["containers"] = Json::array({{{"name", "train"}, {"image", "t:1"}}});
  return {{"dataset", {{"name", dataset}}}, {"template", {{"spec", pod_spec}}}};
}

Json Job(const std::string& name, Json workers, Json extra = Json::object()) {
  Json spec = {{"aggregationWorker",
                {{"model", {{"name", "m"}}},
                 {"template",
                  {{"spec", {{"containers", Json::array({{{"name", "agg"}, {"image", "a:1"}}})}}}}}}},
               {"trainingWorkers", std::move(workers)}};
  spec.update(extra);
  Json job = Object("FederatedLearningJob", name, std::move(spec));
  job["metadata"]["generation"] = 1;
  return job;
}

struct World {
  std::map<std::string, Json> datasets = {
      {"ds", Object("Dataset", "ds", {{"url", "/data/x/train.txt"}, {"format", "txt"}, {"nodeName", "n"}})}};
  std::map<std::string, Json> models = {
      {"m", Object("Model", "m", {{"url", "/models/m.pb"}, {"format", "pb"}})},
      {"pre", Object("Model", "pre", {{"url", "s3://bucket/pre.pb"}, {"format", "pb"}})}};
  std::vector<kube::ObjectPtr> nodes;

  FlPlanInputs Inputs() const {
    FlPlanInputs in;
    auto lookup = [](const std::map<std::string, Json>& objects) {
      return [objects](std::string_view name) -> absl::StatusOr<kube::ObjectPtr> {
        auto it = objects.find(std::string(name));
        if (it == objects.end()) return absl::NotFoundError("not found");
        return std::make_shared<const Json>(it->second);
      };
    };
    in.dataset = lookup(datasets);
    in.model = lookup(models);
    in.nodes = nodes;
    in.lc_server = "http://localhost:9100";
    return in;
  }
  void AddNode(const std::string& name, bool edge = true) {
    Json labels = {{"site", "a"}};
    if (edge) labels[std::string(kEdgeNodeRoleLabel)] = "";
    nodes.push_back(std::make_shared<const Json>(
        Json{{"metadata", {{"name", name}, {"labels", labels}}}, {"spec", Json::object()}}));
  }
};

std::map<std::string, std::string> EnvOf(const Json& pod_template) {
  std::map<std::string, std::string> env;
  for (const Json& e : pod_template["spec"]["containers"][0].value("env", Json::array())) {
    env[e.value("name", "")] = e.value("value", "");
  }
  return env;
}

std::vector<std::string> TaskNames(const FlPlan& plan) {
  std::vector<std::string> names;
  for (const job::Task& t : plan.spec.tasks) names.push_back(t.name);
  return names;
}

std::string Causes(const FlPlan& plan) {
  std::string out;
  for (const kube::StatusCause& c : plan.invalid) out += c.field + ": " + c.message + "\n";
  return out;
}

TEST_CASE("plan: one aggregation task and one task per training worker, defaults of Sedna") {
  World w;
  FlPlan plan = PlanFederatedLearningJob(
      Job("fl", Json::array({Training("ds", {{"nodeName", "n0"}}),
                             Training("ds", {{"nodeName", "n1"}})})),
      w.Inputs());
  INFO(Causes(plan));
  REQUIRE(plan.invalid.empty());
  CHECK(TaskNames(plan) == std::vector<std::string>{"aggregation", "train-0", "train-1"});
  CHECK(plan.TrainingPods() == 2);
  CHECK(plan.TrainingNodes() == std::set<std::string>{"n0", "n1"});
  CHECK(plan.spec.run_policy.CleanPolicy() == job::CleanPodPolicy::kNone);
  CHECK(plan.spec.run_policy.BackoffLimit() == 6);
  CHECK(plan.spec.tasks[0].Replicas() == 1);
  CHECK(plan.spec.tasks[0].EffectiveRestartPolicy() == job::RestartPolicy::kOnFailure);
  CHECK(EnvOf(plan.spec.tasks[0].pod_template)["PARTICIPANTS_COUNT"] == "2");
  CHECK(plan.spec.tasks[1].pod_template["spec"]["nodeName"] == "n0");
  CHECK(plan.training[1].node == "n1");
  CHECK_FALSE(plan.training[1].selected);
  CHECK(plan.spec_hash.size() == 16);
  CHECK(FlPlan{}.IsTrainingTask("train-3"));
  CHECK_FALSE(FlPlan{}.IsTrainingTask("aggregation"));

  edge::v1::FederatedLearningJobSpec n1 = plan.EdgeSpecFor("n1");
  CHECK(n1.aggregation_model_name() == "m");
  REQUIRE(n1.training_workers_size() == 1);
  CHECK(n1.training_workers(0).node_name() == "n1");
  CHECK(plan.EdgeSpecFor("elsewhere").training_workers_size() == 0);
}

TEST_CASE("plan: both transmitters (Sedna's example): s3 wins, its Secret in every pod") {
  World w;
  w.datasets["s3ds"] = Object("Dataset", "s3ds", {{"url", "s3://bucket/train.txt"},
                                                  {"format", "txt"},
                                                  {"credentialName", "mysecret"}});
  Json job = Job("fl", Json::array({Training("s3ds", {{"nodeName", "n0"}})}),
                 {{"transmitter",
                   {{"ws", Json::object()},
                    {"s3", {{"aggDataPath", "s3://bucket/agg"}, {"credentialName", "mysecret"}}}}}});
  FlPlanInputs inputs = w.Inputs();
  std::vector<std::string> asked;
  inputs.s3 = [&](std::string_view secret, std::optional<CredentialProblem>*)
      -> absl::StatusOr<WorkerS3Options> {
    asked.emplace_back(secret);
    WorkerS3Options options;
    options.secret_name = std::string(secret);
    options.credential = {"minio:9000", false, "id-literal", "key-literal"};
    return options;
  };
  FlPlan plan = PlanFederatedLearningJob(job, inputs);
  INFO(Causes(plan));
  REQUIRE(plan.invalid.empty());
  CHECK(plan.transmitter == "s3");
  CHECK(asked == std::vector<std::string>{"mysecret"});  // Read once for all pods.
  for (const job::Task& task : plan.spec.tasks) {
    std::map<std::string, std::string> env = EnvOf(task.pod_template);
    CHECK(env["TRANSMITTER"] == "s3");
    CHECK(env["AGG_DATA_PATH"] == "s3://bucket/agg");
    CHECK(env["S3_ENDPOINT_URL"] == "http://minio:9000");
    CHECK(env.count("SECRET_ACCESS_KEY") == 1);  // By secretKeyRef: no value.
    CHECK(task.pod_template.dump().find("key-literal") == std::string::npos);
  }
  CHECK(EnvOf(plan.spec.tasks[1].pod_template)["TRAIN_DATASET_URL"] == "/downloads/bucket/train.txt");

  SECTION("two different Secrets for one pod are refused") {
    w.datasets["s3ds"]["spec"]["credentialName"] = "other";
    inputs.dataset = w.Inputs().dataset;
    FlPlan refused = PlanFederatedLearningJob(job, inputs);
    REQUIRE(refused.invalid.size() == 1);
    CHECK(refused.invalid[0].message.find("two Secrets") != std::string::npos);
  }
  SECTION("a Secret that cannot be read is a credential problem, not an invalid spec") {
    inputs.s3 = [](std::string_view, std::optional<CredentialProblem>* problem)
        -> absl::StatusOr<WorkerS3Options> {
      *problem = CredentialProblem{"CredentialsForbidden", "may not read"};
      return absl::FailedPreconditionError("may not read");
    };
    FlPlan waiting = PlanFederatedLearningJob(job, inputs);
    CHECK(waiting.invalid.empty());
    REQUIRE(waiting.credential_problem.has_value());
    CHECK(waiting.credential_problem->reason == "CredentialsForbidden");
  }
}

TEST_CASE("plan: transmitter s3, pretrained model and URL kinds") {
  World w;
  w.datasets["web"] = Object("Dataset", "web", {{"url", "https://host/d.txt"}, {"format", "txt"}});
  w.datasets["dir"] = Object("Dataset", "dir", {{"url", "/data/images"}, {"format", "dir"}});
  Json job = Job("fl", Json::array({Training("web", {{"nodeName", "n0"}}),
                                    Training("dir", {{"nodeName", "n1"}})}),
                 {{"pretrainedModel", {{"name", "pre"}}},
                  {"transmitter", {{"s3", {{"aggDataPath", "s3://bucket/agg"}}}}}});
  FlPlan plan = PlanFederatedLearningJob(job, w.Inputs());
  INFO(Causes(plan));
  REQUIRE(plan.invalid.empty());
  CHECK(plan.transmitter == "s3");
  std::map<std::string, std::string> agg = EnvOf(plan.spec.tasks[0].pod_template);
  CHECK(agg["TRANSMITTER"] == "s3");
  CHECK(agg["AGG_DATA_PATH"] == "s3://bucket/agg");
  CHECK(agg["PRETRAINED_MODEL_URL"] == "/downloads/bucket/pre.pb");  // storage-initializer
  std::map<std::string, std::string> web = EnvOf(plan.spec.tasks[1].pod_template);
  CHECK(web["TRAIN_DATASET_URL"] == "https://host/d.txt");  // Passed as is, nothing mounted.
  for (const Json& v : plan.spec.tasks[1].pod_template["spec"]["volumes"]) {
    if (!v.contains("hostPath")) continue;  // The storage-initializer's /downloads.
    CHECK(kube::StringAt(v, "hostPath.path") == "/models");  // The model's; not the dataset's.
  }
  std::map<std::string, std::string> dir = EnvOf(plan.spec.tasks[2].pod_template);
  CHECK(dir["TRAIN_DATASET_URL"] == "/home/data/data/images");
  bool whole_dir = false;
  for (const Json& v : plan.spec.tasks[2].pod_template["spec"]["volumes"]) {
    whole_dir = whole_dir || kube::StringAt(v, "hostPath.path") == "/data/images";
  }
  CHECK(whole_dir);
  CHECK(plan.pretrained_model == "pre");
  CHECK(plan.EdgeSpecFor("n0").pretrained_model_name() == "pre");
  CHECK(plan.EdgeSpecFor("n0").transmitter() == "s3");
}

TEST_CASE("plan: selector placement names tasks after nodes, hashed when too long") {
  World w;
  w.AddNode("edge-b");
  w.AddNode("edge-a");
  w.AddNode("cloud", /*edge=*/false);
  const std::string long_node(60, 'x');
  w.AddNode(long_node);
  w.AddNode("dotted.node.example");
  FlPlan plan = PlanFederatedLearningJob(
      Job("fl", Json::array({Training("ds", {{"nodeSelector", {{"site", "a"}}}})})), w.Inputs());
  INFO(Causes(plan));
  REQUIRE(plan.invalid.empty());
  REQUIRE(plan.training.size() == 4);
  std::map<std::string, std::string> task_of;
  for (const FlTrainingTask& t : plan.training) {
    CHECK(t.selected);
    task_of[t.node] = t.task;
    CHECK(job::IsDnsLabel(job::PodName("fl", t.task, 0)));
  }
  CHECK(task_of["edge-a"] == "train-0-edge-a");
  CHECK(task_of["edge-b"] == "train-0-edge-b");
  CHECK(task_of[long_node].size() == std::string("train-0-").size() + 10);
  CHECK(task_of["dotted.node.example"].rfind("train-0-", 0) == 0);
  CHECK(task_of["dotted.node.example"].find('.') == std::string::npos);
  CHECK(task_of.count("cloud") == 0);
  CHECK(EnvOf(plan.spec.tasks[0].pod_template)["PARTICIPANTS_COUNT"] == "4");
  for (const job::Task& t : plan.spec.tasks) {
    if (t.name == "train-0-edge-a") CHECK(t.pod_template["spec"]["nodeName"] == "edge-a");
  }
  CHECK(SelectorTrainTaskName(std::string(55, 'j'), 0, "n") == "");

  // No edge node matches: no trainer, no aggregator, the worker is reported unplaced.
  World empty;
  FlPlan waiting = PlanFederatedLearningJob(
      Job("fl", Json::array({Training("ds", {{"nodeSelector", {{"site", "a"}}}})})), empty.Inputs());
  REQUIRE(waiting.invalid.empty());
  CHECK(waiting.TrainingPods() == 0);
  CHECK(waiting.unplaced_workers == std::vector<size_t>{0});
  CHECK(waiting.spec.tasks[0].Replicas() == 0);
}

TEST_CASE("plan: a Dataset or Model that does not exist yet is waited for, with the field") {
  World w;
  auto missing = [&](const Json& job) {
    FlPlan plan = PlanFederatedLearningJob(job, w.Inputs());
    CHECK(plan.invalid.empty());
    REQUIRE(plan.missing.has_value());
    return plan.missing->reason + ": " + plan.missing->message;
  };
  Json ok_worker = Training("ds", {{"nodeName", "n0"}});
  CHECK_THAT(missing(Job("fl", Json::array({Training("nope", {{"nodeName", "n0"}})}))),
             Catch::Contains("spec.trainingWorkers[0].dataset.name: Dataset \"nope\" does not exist"));
  CHECK_THAT(missing(Job("fl", Json::array({Training("nope", {{"nodeName", "n0"}})}))),
             Catch::StartsWith("DatasetNotFound"));
  Json no_model = Job("fl", Json::array({ok_worker}));
  no_model["spec"]["aggregationWorker"]["model"]["name"] = "gone";
  CHECK_THAT(missing(no_model), Catch::Contains("spec.aggregationWorker.model.name"));
  CHECK_THAT(missing(no_model), Catch::StartsWith("ModelNotFound"));
  const Json no_pretrained =
      Job("fl", Json::array({ok_worker}), {{"pretrainedModel", {{"name", "gone"}}}});
  CHECK_THAT(missing(no_pretrained), Catch::Contains("spec.pretrainedModel.name"));
}

TEST_CASE("plan: what cannot work is invalid, with the field") {
  World w;
  auto invalid = [&](const Json& job) {
    FlPlan plan = PlanFederatedLearningJob(job, w.Inputs());
    CHECK_FALSE(plan.invalid.empty());
    return Causes(plan);
  };
  Json ok_worker = Training("ds", {{"nodeName", "n0"}});
  CHECK_THAT(invalid(Job("fl", Json::array({ok_worker}),
                         {{"runPolicy", {{"cleanPodPolicy", "Sometimes"}}}})),
             Catch::Contains("spec.runPolicy.cleanPodPolicy"));
  CHECK_THAT(invalid(Job("fl", Json::array({ok_worker}), {{"runPolicy", {{"backoffLimit", -1}}}})),
             Catch::Contains("spec.runPolicy.backoffLimit"));
  CHECK_THAT(invalid(Job("fl", Json::array({ok_worker}), {{"runPolicy", "yes"}})),
             Catch::Contains("spec.runPolicy"));
  CHECK_THAT(invalid(Job(std::string(55, 'a'), Json::array({ok_worker}))),
             Catch::Contains("shorten the job name"));
  CHECK_THAT(invalid(Job("fl.dotted", Json::array({ok_worker}))),
             Catch::Contains("DNS-1035"));
  Json no_template = Job("fl", Json::array({ok_worker}));
  no_template["spec"]["aggregationWorker"].erase("template");
  CHECK_THAT(invalid(no_template), Catch::Contains("spec.aggregationWorker.template"));
  Json no_workers = Job("fl", Json::array());
  CHECK_THAT(invalid(no_workers), Catch::Contains("spec.trainingWorkers"));
  Json label = Job("fl", Json::array({ok_worker}));
  label["spec"]["trainingWorkers"][0]["template"]["metadata"] = {
      {"labels", {{"federatedlearningjob.sedna.io/worker-type", "mine"}}}};
  CHECK_THAT(invalid(label), Catch::Contains("worker-type"));
  CHECK_THAT(invalid(Json::array()), Catch::Contains("FederatedLearningJob"));
  Json bad_selector = Job("fl", Json::array({Training("ds", {{"nodeSelector", {{"a", 1}}}})}));
  CHECK_THAT(invalid(bad_selector), Catch::Contains("spec.trainingWorkers[0].template.spec.nodeSelector.a"));
  w.models["m"]["spec"]["url"] = "ftp://nope/m.pb";
  CHECK_THAT(invalid(Job("fl", Json::array({ok_worker}))), Catch::Contains("MODEL_URL"));
}

TEST_CASE("plan: the spec hash follows what the pods are built from, not the run policy") {
  World w;
  Json job = Job("fl", Json::array({Training("ds", {{"nodeName", "n0"}})}));
  const std::string base = PlanFederatedLearningJob(job, w.Inputs()).spec_hash;
  CHECK(PlanFederatedLearningJob(job, w.Inputs()).spec_hash == base);  // Deterministic.
  Json policy = job;
  policy["spec"]["runPolicy"] = {{"backoffLimit", 2}};
  CHECK(PlanFederatedLearningJob(policy, w.Inputs()).spec_hash == base);
  Json image = job;
  image["spec"]["trainingWorkers"][0]["template"]["spec"]["containers"][0]["image"] = "t:2";
  CHECK(PlanFederatedLearningJob(image, w.Inputs()).spec_hash != base);
  World moved = w;
  moved.datasets["ds"]["spec"]["url"] = "/data/y/train.txt";
  CHECK(PlanFederatedLearningJob(job, moved.Inputs()).spec_hash != base);
}

TEST_CASE("success: every training pod succeeded; the aggregator is not waited for") {
  job::JobSpec spec;
  for (const char* name : {"aggregation", "train-0", "train-1"}) {
    job::Task task;
    task.name = name;
    spec.tasks.push_back(std::move(task));
  }
  std::map<std::string, job::ReplicaStatus> counts;
  counts["aggregation"].active = 1;
  counts["train-0"].succeeded = 1;
  CHECK_FALSE(FlTrainingSucceeded(spec, counts));
  counts["train-1"].succeeded = 1;
  CHECK(FlTrainingSucceeded(spec, counts));
  job::JobSpec no_trainers;
  no_trainers.tasks.push_back(spec.tasks.front());
  CHECK_FALSE(FlTrainingSucceeded(no_trainers, {{"aggregation", {.succeeded = 1}}}));
}

TEST_CASE("status: phase, counts and bounded Sedna conditions from the library status") {
  const absl::Time t0 = absl::FromUnixSeconds(1700000000);
  job::JobStatus js;
  js.phase = "Restarting";
  js.replica_statuses["aggregation"] = {.active = 1};
  js.replica_statuses["train-0"] = {.active = 0, .succeeded = 1, .failed = 0};
  js.task_status["train-1"]["Pending"] = 1;
  js.restarts = 2;
  js.start_time = t0;
  job::SetCondition(&js, "Restarting", "True", "JobRestarting", "pod failed", t0);
  Json status = Json::object();
  FlStatusUpdate update{&js, 3, "", t0};
  ApplyReconcileStatus(update, &status);
  CHECK(status["phase"] == "Running");
  CHECK(status["active"] == 2);
  CHECK(status["succeeded"] == 1);
  CHECK(status["restarts"] == 2);
  CHECK(status["observedGeneration"] == 3);
  CHECK(status["startTime"] == "2023-11-14T22:13:20Z");
  CHECK(status["job"]["phase"] == "Restarting");
  CHECK(status["conditions"].size() == 1);
  CHECK(status["conditions"][0]["type"] == "Training");
  CHECK(status["conditions"][0]["reason"] == "JobRestarting");

  // The same state again writes nothing new; flapping states stay within the cap.
  Json again = status;
  ApplyReconcileStatus(update, &again);
  CHECK(again == status);
  for (int i = 0; i < 40; ++i) {
    job::JobStatus flap;
    job::SetCondition(&flap, "Running", i % 2 == 0 ? "True" : "False", "X", "y",
                      t0 + absl::Seconds(i));
    FlStatusUpdate u{&flap, 3, "", t0 + absl::Seconds(i)};
    ApplyReconcileStatus(u, &status);
  }
  CHECK(status["conditions"].size() == api::kMaxConditions);

  // Terminal states map to Complete / Failed; the round is the report handler's, a spec change's
  // ResetRound clears it.
  status["currentRound"] = 7;
  status["roundUpdateTime"] = "2023-11-14T22:13:20Z";
  job::JobStatus failed;
  job::SetCondition(&failed, "Failed", "True", "BackoffLimitExceeded", "too many", t0);
  failed.phase = "Failed";
  failed.completion_time = t0;
  FlStatusUpdate fu{&failed, 4, "", t0};
  ApplyReconcileStatus(fu, &status);
  CHECK(status["phase"] == "Failed");
  CHECK(status["conditions"].back()["type"] == "Failed");
  CHECK(status["conditions"].back()["reason"] == "BackoffLimitExceeded");
  CHECK(status.contains("completionTime"));
  CHECK(status["currentRound"] == 7);
  CHECK(ResetRound(&status));
  CHECK_FALSE(status.contains("currentRound"));
  CHECK_FALSE(status.contains("roundUpdateTime"));
  CHECK_FALSE(ResetRound(&status));

  job::JobStatus nothing;
  Json fresh = nullptr;
  FlStatusUpdate nu{&nothing, 1, "no edge node matches", t0};
  ApplyReconcileStatus(nu, &fresh);
  CHECK(fresh["phase"] == "Pending");
  CHECK(fresh["conditions"][0]["reason"] == "NoMatchingNodes");
  CHECK(FlPhase("Suspended") == "Suspended");

  // The embedded status is what the next reconcile continues from.
  Json object = {{"status", status}};
  CHECK(ReadEmbeddedJobStatus(object).phase == "Failed");
  CHECK(ReadEmbeddedJobStatus(Json{{"status", {{"job", 5}}}}).phase.empty());
}

TEST_CASE("reports: rounds and model metrics, malformed input ignored") {
  CHECK(ReportedRound(R"({"currentRound": 3, "sampleCount": 10})") == 3);
  CHECK(ReportedRound(R"({"currentRound": "12"})") == 12);
  CHECK(ReportedRound(R"({"currentRound": 2.0})") == 2);
  CHECK_FALSE(ReportedRound(R"({"currentRound": 0})").has_value());
  CHECK_FALSE(ReportedRound(R"({"currentRound": -4})").has_value());
  CHECK_FALSE(ReportedRound(R"({"currentRound": "x"})").has_value());
  CHECK_FALSE(ReportedRound(R"({"currentRound": null})").has_value());
  CHECK_FALSE(ReportedRound("{broken").has_value());
  CHECK_FALSE(ReportedRound("").has_value());
  CHECK_FALSE(ReportedRound("[1]").has_value());

  const absl::Time t = absl::FromUnixSeconds(1700000000);
  Json status = nullptr;
  CHECK(ApplyRound(2, t, &status));
  CHECK_FALSE(ApplyRound(1, t + absl::Seconds(5), &status));
  CHECK_FALSE(ApplyRound(2, t + absl::Seconds(5), &status));
  CHECK(status["currentRound"] == 2);
  CHECK(status["roundUpdateTime"] == "2023-11-14T22:13:20Z");

  std::vector<api::Metric> metrics = ReportedMetrics(
      R"([{"format":"pb","metrics":{"loss":0.125,"acc":[0.5,1],"name":"x","n":3}}, {"metrics":{"z":1}}])");
  REQUIRE(metrics.size() == 4);
  CHECK(metrics[0].key == "acc");
  CHECK(metrics[0].value == "0.5,1");
  CHECK(metrics[1].value == "0.125");
  CHECK(metrics[2].value == "3");
  CHECK(metrics[3].value == "x");
  CHECK(ReportedMetrics(R"({"models":[{"metrics":{"a":0.1}}]})").size() == 1);
  CHECK(ReportedMetrics("[]").empty());
  CHECK(ReportedMetrics("[{\"metrics\": 3}]").empty());
  CHECK(ReportedMetrics("not json").empty());

  Json model_status = Json::object();
  CHECK(ApplyModelMetrics(metrics, t, &model_status));
  CHECK_FALSE(ApplyModelMetrics(metrics, t + absl::Seconds(1), &model_status));
  CHECK(model_status["metrics"].size() == 4);
  CHECK(model_status["updateTime"] == "2023-11-14T22:13:20Z");
}

}  // namespace
}  // namespace nereid::gm
