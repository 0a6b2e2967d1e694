// FederatedLearningController on the fake API (controller_env.h): pods and Service from the
// templates, placement by node selector, retries and failure, success, round progress, model
// metrics, invalid specs, spec changes and the edge registry.

#include "globalmanager/controllers/federated_learning_controller.h"

#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "common/api/sedna_contract.h"
#include "common/job/expectations.h"
#include "common/kube/errors.h"
#include "globalmanager/controllers/federated_learning_status.h"
#include "globalmanager/controllers/placement.h"
#include "globalmanager/controllers/spec_validity.h"
#include "globalmanager/controllers/status_conditions.h"
#include "tests/fakes/eventually.h"
#include "tests/globalmanager/controllers/controller_env.h"

namespace nereid::gm {
namespace {

using fakes::Eventually;
using kube::Json;
using testing::ControllerEnv;
using testing::DatasetObject;
using testing::ModelObject;

const kube::Resource& Jobs() { return api::resources::FederatedLearningJobs(); }
const kube::Resource& Pods() { return kube::resources::Pods(); }
constexpr char kJobRef[] = "FederatedLearningJob/default/fl1";

Json Container(const std::string& name, Json env = Json::array()) {
  Json c = {{"name", name}, {"image", "sedna/" + name + ":v1"}};
  if (!env.empty()) c["env"] = env;
  return c;
}

Json TrainingWorker(const std::string& dataset, Json pod_spec) {
  if (!pod_spec.contains("containers")) {
    pod_spec["containers"] = Json::array({Container("train", {{{"name", "batch_size"},
                                                               {"value", "32"}}})});
  }
  return {{"dataset", {{"name", dataset}}}, {"template", {{"spec", pod_spec}}}};
}

Json FlJob(const std::string& name, Json training_workers, Json extra_spec = Json::object()) {
  Json spec = {{"aggregationWorker",
                {{"model", {{"name", "agg-model"}}},
                 {"template", {{"spec", {{"containers", Json::array({Container("agg")})}}}}}}},
               {"trainingWorkers", std::move(training_workers)}};
  spec.update(extra_spec);
  return {{"apiVersion", std::string(api::kApiVersion)},
          {"kind", "FederatedLearningJob"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"spec", std::move(spec)}};
}

Json TwoNodeJob(Json extra_spec = Json::object()) {
  return FlJob("fl1",
               Json::array({TrainingWorker("ds0", {{"nodeName", "edge-0"}}),
                            TrainingWorker("ds1", {{"nodeName", "edge-1"}})}),
               std::move(extra_spec));
}

Json NodeObject(const std::string& name, std::map<std::string, std::string> labels) {
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", name}, {"labels", labels}}},
          {"spec", Json::object()}};
}

std::map<std::string, std::string> EnvOf(const Json& pod, size_t container = 0) {
  std::map<std::string, std::string> env;
  const Json* list = kube::FindPath(pod["spec"]["containers"][container], "env");
  if (list == nullptr) return env;
  for (const Json& e : *list) env[e.value("name", "")] = e.value("value", "");
  return env;
}

edge::v1::StatusReport WorkerReport(uint64_t seq, const Json& job, const std::string& worker,
                                    const Json& owner_info, const Json& results = nullptr) {
  edge::v1::StatusReport report;
  report.set_seq(seq);
  report.mutable_ref()->set_kind("FederatedLearningJob");
  report.mutable_ref()->set_namespace_("default");
  report.mutable_ref()->set_name(kube::Name(job));
  report.mutable_ref()->set_uid(kube::Uid(job));
  edge::v1::WorkerReport* w = report.mutable_worker();
  w->set_worker_name(worker);
  w->set_worker_kind("train");
  w->set_status("running");
  w->set_owner_info_json(owner_info.dump());
  if (!results.is_null()) w->set_results_json(results.dump());
  return report;
}

struct Fixture {
  ControllerEnv env;
  std::unique_ptr<FederatedLearningController> controller;

  // Datasets ds0/ds1 (host paths) and the Model agg-model exist unless `objects` says otherwise.
  explicit Fixture(bool with_refs = true, const std::vector<Json>& nodes = {}) {
    if (with_refs) {
      env.Create(api::resources::Datasets(), DatasetObject("ds0", "edge-0", "/data/a/train.txt"));
      env.Create(api::resources::Datasets(), DatasetObject("ds1", "edge-1", "/data/b/train.txt"));
      env.Create(api::resources::Models(), ModelObject("agg-model", "/models/out/model.pb"));
    }
    for (const Json& node : nodes) env.Create(kube::resources::Nodes(), node);
    controller = env.Run(FederatedLearningController::Create(env.context()));
  }
  ~Fixture() { env.StopInformersAndController(*controller); }

  std::map<std::string, Json> Pods(const std::string& job = "fl1") {
    std::map<std::string, Json> out;
    for (const Json& pod : env.client().Objects(gm::Pods())) {
      std::optional<kube::OwnerReference> owner = kube::ControllerOf(pod);
      if (owner.has_value() && owner->name == job && !kube::IsBeingDeleted(pod)) {
        out[kube::Name(pod)] = pod;
      }
    }
    return out;
  }
  std::set<std::string> PodNames(const std::string& job = "fl1") {
    std::set<std::string> names;
    for (const auto& [name, pod] : Pods(job)) names.insert(name);
    return names;
  }
  Json Status(const std::string& name = "fl1") { return env.StatusOf(Jobs(), name); }
  void SetPhase(const std::string& pod, const std::string& phase, Json extra = Json::object()) {
    Json status = {{"phase", phase}};
    status.update(extra);
    absl::StatusOr<Json> patched = env.client().Patch(gm::Pods(), "default", pod,
                                                      kube::PatchType::kMerge,
                                                      {{"status", status}}, "status");
    INFO(patched.status().ToString());
    REQUIRE(patched.ok());
  }
  bool WaitStatus(const std::function<bool(const Json&)>& predicate,
                  const std::string& name = "fl1") {
    Json last;
    bool ok = Eventually([&] {
      last = Status(name);
      return predicate(last);
    });
    if (!ok) UNSCOPED_INFO("last status: " << last.dump());
    return ok;
  }
  bool WaitPods(const std::set<std::string>& names, const std::string& job = "fl1") {
    bool ok = Eventually([&] { return PodNames(job) == names; });
    if (!ok) {
      std::string have;
      for (const std::string& n : PodNames(job)) have += n + " ";
      UNSCOPED_INFO("pods: " << have);
    }
    return ok;
  }
  // Waits until the controller's caches hold default/<name> (a Dataset, Model or pod).
  void WaitInCache(const std::string& name) {
    REQUIRE(Eventually([&] {
      for (kube::SharedInformer* informer : controller->informers()) {
        if (informer->GetLister().Get("default", name).ok()) return true;
      }
      return false;
    }));
  }
  // Waits until the job's cache copy is at least what the API had at the call (for HandleReport
  // tests). At least, not equal: the controller may write the status again meanwhile, and the
  // cache then skips past the version read here.
  void WaitCached(const std::string& name = "fl1") {
    const std::string rv = kube::ResourceVersion(env.Get(Jobs(), "default", name));
    REQUIRE(Eventually([&] {
      auto cached = controller->informers()[0]->GetLister().Get("default", name);
      return cached.ok() && job::ResourceVersionAtLeast(kube::ResourceVersion(**cached), rv);
    }));
  }
};

const std::set<std::string> kTwoNodePods = {"fl1-aggregation-0", "fl1-train-0-0",
                                            "fl1-train-1-0"};

TEST_CASE("FL: aggregation pod, training pods and Service with Sedna's labels, env and owner") {
  Fixture f;
  Json worker0 = TrainingWorker(
      "ds0", {{"nodeName", "edge-0"},
              {"containers",
               Json::array({Container("train", {{{"name", "batch_size"}, {"value", "32"}},
                                                 {{"name", "AGG_PORT"}, {"value", "9999"}}})})}});
  Json job = f.env.Create(
      Jobs(), FlJob("fl1", Json::array({worker0, TrainingWorker("ds1", {{"nodeName", "edge-1"}})})));
  REQUIRE(f.WaitPods(kTwoNodePods));
  std::map<std::string, Json> pods = f.Pods();

  const Json& agg = pods["fl1-aggregation-0"];
  CHECK(kube::Labels(agg)["federatedlearningjob.sedna.io/name"] == "fl1");
  CHECK(kube::Labels(agg)["federatedlearningjob.sedna.io/uid"] == kube::Uid(job));
  CHECK(kube::Labels(agg)["federatedlearningjob.sedna.io/worker-type"] == "aggregation");
  std::optional<kube::OwnerReference> owner = kube::ControllerOf(agg);
  REQUIRE(owner.has_value());
  CHECK(owner->kind == "FederatedLearningJob");
  CHECK(owner->uid == kube::Uid(job));
  CHECK(owner->block_owner_deletion);
  std::map<std::string, std::string> agg_env = EnvOf(agg);
  CHECK(agg_env["AGG_BIND_PORT"] == "7363");
  CHECK(agg_env["PARTICIPANTS_COUNT"] == "2");
  CHECK(agg_env["TRANSMITTER"] == "ws");
  CHECK(agg_env["NAMESPACE"] == "default");
  CHECK(agg_env["JOB_NAME"] == "fl1");
  CHECK(agg_env["WORKER_NAME"] == "fl1-aggregation-0");
  CHECK(agg_env["LC_SERVER"] == f.env.context().settings.lc_server);
  CHECK(agg_env["MODEL_URL"] == "/home/data/models/out/model.pb");
  CHECK(agg["spec"]["restartPolicy"] == "OnFailure");
  CHECK_FALSE(agg["spec"].value("hostNetwork", false));

  const Json& train0 = pods["fl1-train-0-0"];
  CHECK(kube::Labels(train0)["federatedlearningjob.sedna.io/worker-type"] == "train");
  CHECK(train0["spec"]["nodeName"] == "edge-0");
  CHECK(train0["spec"]["hostNetwork"] == true);
  CHECK(train0["spec"]["dnsPolicy"] == "ClusterFirstWithHostNet");
  CHECK(train0["spec"]["restartPolicy"] == "OnFailure");
  std::map<std::string, std::string> env0 = EnvOf(train0);
  CHECK(env0["batch_size"] == "32");   // The user's env is kept...
  CHECK(env0["AGG_PORT"] == "9999");   // ...and wins over Nereid's.
  CHECK(env0["AGG_IP"] == "fl1-aggregation.default");
  CHECK(env0["MODEL_NAME"] == "agg-model");
  CHECK(env0["DATASET_NAME"] == "ds0");
  CHECK(env0["TRAIN_DATASET_URL"] == "/home/data/data/a/train.txt");
  CHECK(env0["DATA_PATH_PREFIX"] == "/home/data");
  CHECK(env0["WORKER_NAME"] == "fl1-train-0-0");
  bool dataset_volume = false;
  for (const Json& v : train0["spec"]["volumes"]) {
    dataset_volume = dataset_volume || kube::StringAt(v, "hostPath.path") == "/data/a";
  }
  CHECK(dataset_volume);
  bool dataset_mount = false;
  for (const Json& m : train0["spec"]["containers"][0]["volumeMounts"]) {
    dataset_mount = dataset_mount || (m["mountPath"] == "/home/data/data/a" &&
                                      m.value("readOnly", false));
  }
  CHECK(dataset_mount);
  CHECK(EnvOf(pods["fl1-train-1-0"])["AGG_PORT"] == "7363");
  CHECK(pods["fl1-train-1-0"]["spec"]["nodeName"] == "edge-1");

  // The aggregation Service.
  REQUIRE(Eventually([&] {
    return f.env.client().Get(kube::resources::Services(), "default", "fl1-aggregation").ok();
  }));
  Json svc = *f.env.client().Get(kube::resources::Services(), "default", "fl1-aggregation");
  CHECK(svc["spec"]["ports"][0]["port"] == 7363);
  CHECK(svc["spec"]["ports"][0]["name"] == "tcp-0");
  CHECK(svc["spec"]["selector"]["federatedlearningjob.sedna.io/worker-type"] == "aggregation");
  CHECK(kube::ControllerOf(svc)->uid == kube::Uid(job));

  // Each training node's LC holds the job with only its own training worker.
  REQUIRE(Eventually([&] {
    return f.env.edge().Holds("edge-0", kJobRef) && f.env.edge().Holds("edge-1", kJobRef);
  }));
  edge::v1::Resource r0 = *f.env.edge().Get("edge-0", kJobRef);
  CHECK(r0.ref().uid() == kube::Uid(job));
  CHECK(r0.federated_learning_job().aggregation_model_name() == "agg-model");
  CHECK(r0.federated_learning_job().transmitter() == "ws");
  REQUIRE(r0.federated_learning_job().training_workers_size() == 1);
  CHECK(r0.federated_learning_job().training_workers(0).dataset_name() == "ds0");
  CHECK(r0.federated_learning_job().training_workers(0).node_name() == "edge-0");
  CHECK(f.controller->PlacedNodes("default/fl1") == std::set<std::string>{"edge-0", "edge-1"});

  // Pending until every pod runs; no conditions yet, active counts pending pods.
  REQUIRE(f.WaitStatus([](const Json& s) { return s.value("active", 0) == 3; }));
  Json status = f.Status();
  CHECK(status["phase"] == "Pending");
  CHECK(status["observedGeneration"] == 1);
  CHECK(status.contains("startTime"));
  bool service_event = false;
  for (const Json& e : f.env.Events("fl1", "SuccessfulCreateService")) {
    service_event = service_event || e.value("message", "") == "Created service: fl1-aggregation";
  }
  CHECK(service_event);
}

TEST_CASE("FL: a nodeSelector over 3 nodes with 2 edge matches makes 2 training pods") {
  std::map<std::string, std::string> edge_site = {{std::string(kEdgeNodeRoleLabel), ""},
                                                  {"site", "factory"}};
  Fixture f(true, {NodeObject("e1", edge_site), NodeObject("e2", edge_site),
                   NodeObject("cloud-1", {{"site", "factory"}})});
  Json job = f.env.Create(
      Jobs(), FlJob("fl1", Json::array({TrainingWorker("ds0", {{"nodeSelector",
                                                                {{"site", "factory"}}}})})));
  REQUIRE(f.WaitPods({"fl1-aggregation-0", "fl1-train-0-e1-0", "fl1-train-0-e2-0"}));
  std::map<std::string, Json> pods = f.Pods();
  CHECK(pods["fl1-train-0-e1-0"]["spec"]["nodeName"] == "e1");
  CHECK(pods["fl1-train-0-e2-0"]["spec"]["nodeName"] == "e2");
  CHECK(pods["fl1-train-0-e1-0"]["spec"]["nodeSelector"]["site"] == "factory");  // Kept.
  CHECK(EnvOf(pods["fl1-aggregation-0"])["PARTICIPANTS_COUNT"] == "2");
  CHECK(EnvOf(pods["fl1-train-0-e2-0"])["DATASET_NAME"] == "ds0");
  REQUIRE(Eventually([&] {
    return f.env.edge().Holds("e1", kJobRef) && f.env.edge().Holds("e2", kJobRef);
  }));
  CHECK_FALSE(f.env.edge().Holds("cloud-1", kJobRef));
  CHECK(f.env.edge().Get("e2", kJobRef)->federated_learning_job().training_workers(0).node_name() ==
        "e2");

  // A third node joins the edge: the session restarts with 3 participants.
  f.env.Patch(kube::resources::Nodes(), "", "cloud-1",
              {{"metadata", {{"labels", {{std::string(kEdgeNodeRoleLabel), ""}}}}}});
  REQUIRE(Eventually([&] {
    std::map<std::string, Json> now = f.Pods();
    return now.size() == 4 && now.count("fl1-train-0-cloud-1-0") == 1 &&
           EnvOf(now["fl1-aggregation-0"])["PARTICIPANTS_COUNT"] == "3";
  }));
  CHECK(f.env.Events("fl1", std::string(fl_reasons::kSpecChanged)).size() >= 1);
  REQUIRE(Eventually([&] { return f.env.edge().Holds("cloud-1", kJobRef); }));

  // A node leaves: its pod goes and its LC is told to drop the job.
  f.env.Delete(kube::resources::Nodes(), "", "e1");
  REQUIRE(Eventually([&] { return f.PodNames().count("fl1-train-0-e1-0") == 0; }));
  REQUIRE(Eventually([&] { return !f.env.edge().Holds("e1", kJobRef); }));
}

TEST_CASE("FL: a selector matching no edge node waits with a condition and an Event") {
  Fixture f(true, {NodeObject("cloud-1", {{"site", "factory"}})});
  f.env.Create(Jobs(), FlJob("fl1", Json::array({TrainingWorker(
                                        "ds0", {{"nodeSelector", {{"site", "factory"}}}})})));
  REQUIRE(f.WaitStatus([](const Json& s) {
    return s.contains("conditions") && s["conditions"].back()["reason"] == "NoMatchingNodes";
  }));
  CHECK(f.Status()["conditions"].back()["type"] == "Training");
  CHECK(f.Status()["conditions"].back()["status"] == "False");
  CHECK(f.Status()["phase"] == "Pending");
  CHECK(f.Pods().empty());
  CHECK(f.env.Events("fl1", "NoMatchingNodes").size() == 1);
  // The node becomes an edge node: the job proceeds.
  f.env.Patch(kube::resources::Nodes(), "", "cloud-1",
              {{"metadata", {{"labels", {{std::string(kEdgeNodeRoleLabel), ""}}}}}});
  REQUIRE(f.WaitPods({"fl1-aggregation-0", "fl1-train-0-cloud-1-0"}));
}

TEST_CASE("FL: a failed training pod is retried up to backoffLimit, then the job fails") {
  Fixture f;
  f.env.Create(Jobs(), TwoNodeJob({{"runPolicy", {{"backoffLimit", 1}}}}));
  REQUIRE(f.WaitPods(kTwoNodePods));
  const std::string first_uid = kube::Uid(f.Pods()["fl1-train-0-0"]);
  f.SetPhase("fl1-train-0-0", "Failed");
  // Recreated (a new pod under the same name) and counted.
  REQUIRE(Eventually([&] {
    std::map<std::string, Json> pods = f.Pods();
    return pods.count("fl1-train-0-0") == 1 && kube::Uid(pods["fl1-train-0-0"]) != first_uid;
  }));
  REQUIRE(f.WaitStatus([](const Json& s) { return s.value("restarts", 0) == 1; }));
  CHECK(f.Status()["job"]["replicaStatuses"]["train-0"]["recreated"] == 1);
  CHECK(f.Status()["phase"] != "Failed");
  CHECK(f.env.Events("fl1", "JobRestarting").size() >= 1);

  // The second failure is beyond the limit.
  f.SetPhase("fl1-train-0-0", "Failed");
  REQUIRE(f.WaitStatus([](const Json& s) { return s.value("phase", "") == "Failed"; }));
  Json status = f.Status();
  CHECK(status["conditions"].back()["type"] == "Failed");
  CHECK(status["conditions"].back()["status"] == "True");
  CHECK(status["conditions"].back()["reason"] == "BackoffLimitExceeded");
  CHECK(status.contains("completionTime"));
  CHECK(f.env.Events("fl1", "BackoffLimitExceeded").size() == 1);
  // Nothing is recreated after the job failed; the running pods were stopped, the failed one kept.
  REQUIRE(Eventually([&] { return f.PodNames() == std::set<std::string>{"fl1-train-0-0"}; }));
}

TEST_CASE("FL: Running when every pod runs, Succeeded when every training pod succeeded") {
  Fixture f;
  f.env.Create(Jobs(), TwoNodeJob());
  REQUIRE(f.WaitPods(kTwoNodePods));
  for (const std::string& pod : kTwoNodePods) f.SetPhase(pod, "Running");
  REQUIRE(f.WaitStatus([](const Json& s) { return s.value("phase", "") == "Running"; }));
  Json running = f.Status();
  CHECK(running["active"] == 3);
  CHECK(running["conditions"].back()["type"] == "Training");
  CHECK(running["conditions"].back()["status"] == "True");

  f.SetPhase("fl1-train-0-0", "Succeeded");
  // One trainer done is not the job done.
  REQUIRE(f.WaitStatus([](const Json& s) { return s.value("succeeded", 0) == 1; }));
  CHECK(f.Status()["phase"] == "Running");
  f.SetPhase("fl1-train-1-0", "Succeeded");
  REQUIRE(f.WaitStatus([](const Json& s) { return s.value("phase", "") == "Succeeded"; }));
  Json done = f.Status();
  CHECK(done["conditions"].back()["type"] == "Complete");
  CHECK(done["conditions"].back()["status"] == "True");
  CHECK(done.contains("completionTime"));
  CHECK(done["conditions"].size() <= api::kMaxConditions);
  CHECK(f.env.Events("fl1", "JobSucceeded").size() == 1);
  // cleanPodPolicy None (the default): every pod stays, the aggregation pod included.
  CHECK(f.PodNames() == kTwoNodePods);
}

TEST_CASE("FL: round progress is one bounded field, model metrics go to the Model") {
  Fixture f;
  Json job = f.env.Create(Jobs(), TwoNodeJob());
  REQUIRE(f.WaitPods(kTwoNodePods));
  f.WaitCached();
  for (int round = 1; round <= 25; ++round) {
    ReportOutcome outcome = f.controller->HandleReport(
        "edge-0", WorkerReport(round, job, "fl1-train-0-0", {{"currentRound", round}}));
    REQUIRE(outcome.code == ReportOutcome::Code::kAccepted);
  }
  Json status = f.Status();
  CHECK(status["currentRound"] == 25);
  CHECK(status.contains("roundUpdateTime"));
  CHECK(status.value("conditions", Json::array()).size() <= 2);  // Not one per round.
  // An older round (another worker lagging) never moves it back; a string round is understood.
  REQUIRE(f.controller->HandleReport("edge-1", WorkerReport(30, job, "fl1-train-1-0",
                                                            {{"currentRound", 3}}))
              .code == ReportOutcome::Code::kAccepted);
  CHECK(f.Status()["currentRound"] == 25);
  REQUIRE(f.controller->HandleReport("edge-1", WorkerReport(31, job, "fl1-train-1-0",
                                                            {{"currentRound", "26"}}))
              .code == ReportOutcome::Code::kAccepted);
  CHECK(f.Status()["currentRound"] == 26);

  Json results = Json::array(
      {{{"format", "pb"}, {"url", "/models/out/model.pb"},
        {"metrics", {{"recall", Json::array({0.5, 0.25})}, {"accuracy", 0.93}}}}});
  REQUIRE(f.controller->HandleReport("edge-0", WorkerReport(40, job, "fl1-aggregation-0",
                                                            Json::object(), results))
              .code == ReportOutcome::Code::kAccepted);
  Json model = f.env.Get(api::resources::Models(), "default", "agg-model");
  REQUIRE(model.contains("status"));
  CHECK(model["status"]["metrics"] ==
        Json::array({{{"key", "accuracy"}, {"value", "0.93"}},
                     {{"key", "recall"}, {"value", "0.5,0.25"}}}));
  CHECK(model["status"].contains("updateTime"));

  // Malformed reports lose nothing and crash nothing.
  edge::v1::StatusReport bad = WorkerReport(50, job, "fl1-train-0-0", Json::object());
  bad.mutable_worker()->set_owner_info_json("{not json");
  bad.mutable_worker()->set_results_json("[1, 2");
  CHECK(f.controller->HandleReport("edge-0", bad).code == ReportOutcome::Code::kAccepted);
  CHECK(f.Status()["currentRound"] == 26);
  edge::v1::StatusReport not_worker = WorkerReport(51, job, "w", Json::object());
  not_worker.mutable_dataset()->set_number_of_samples(1);
  CHECK(f.controller->HandleReport("edge-0", not_worker).code == ReportOutcome::Code::kRejected);
  edge::v1::StatusReport gone = WorkerReport(52, job, "w", {{"currentRound", 1}});
  gone.mutable_ref()->set_name("nope");
  CHECK(f.controller->HandleReport("edge-0", gone).code == ReportOutcome::Code::kRejected);
}

TEST_CASE("FL: a report sent before the worker's current pod existed is accepted and ignored") {
  Fixture f;
  Json job = f.env.Create(Jobs(), TwoNodeJob());
  REQUIRE(f.WaitPods(kTwoNodePods));
  f.WaitCached();
  f.WaitInCache("fl1-train-0-0");  // Telling an old report needs the current pod.
  std::optional<absl::Time> created = kube::CreationTimestamp(f.Pods()["fl1-train-0-0"]);
  REQUIRE(created.has_value());
  // From a previous pod under the same name (e.g. before a spec change restarted it).
  edge::v1::StatusReport old = WorkerReport(1, job, "fl1-train-0-0", {{"currentRound", 9}});
  old.mutable_worker()->mutable_time()->set_seconds(absl::ToUnixSeconds(*created - absl::Seconds(5)));
  CHECK(f.controller->HandleReport("edge-0", old).code == ReportOutcome::Code::kAccepted);
  CHECK_FALSE(f.Status().contains("currentRound"));
  // The current pod's report counts.
  edge::v1::StatusReport now = WorkerReport(2, job, "fl1-train-0-0", {{"currentRound", 2}});
  now.mutable_worker()->mutable_time()->set_seconds(absl::ToUnixSeconds(*created + absl::Seconds(1)));
  CHECK(f.controller->HandleReport("edge-0", now).code == ReportOutcome::Code::kAccepted);
  CHECK(f.Status()["currentRound"] == 2);
}

TEST_CASE("FL: invalid specs and missing references get SpecValid=False, an Event and no pods; a "
          "Dataset appearing later lets the job proceed") {
  Fixture f(/*with_refs=*/false);
  f.env.Create(api::resources::Models(), ModelObject("agg-model", "/models/out/model.pb"));
  // References are in the controller's cache before the job: else the first InvalidSpec message
  // also names them, and their arrival changes the message (a second, legitimate Event).
  f.WaitInCache("agg-model");

  SECTION("unknown dataset, then it appears") {
    f.env.Create(Jobs(), FlJob("fl1", Json::array({TrainingWorker("ds0", {{"nodeName", "edge-0"}})})));
    REQUIRE(f.WaitStatus([](const Json& s) { return ConditionIs(s, kSpecValidCondition, "False"); }));
    std::optional<api::Condition> c = FindStatusCondition(f.Status(), kSpecValidCondition);
    CHECK_THAT(c->message, Catch::Contains("Dataset \"ds0\" does not exist"));
    CHECK_THAT(c->message, Catch::Contains("spec.trainingWorkers[0].dataset.name"));
    CHECK(c->reason == "DatasetNotFound");
    CHECK(f.env.Events("fl1", "DatasetNotFound").size() == 1);
    CHECK(f.Pods().empty());
    f.env.Create(api::resources::Datasets(), DatasetObject("ds0", "edge-0", "/data/a/t.txt"));
    REQUIRE(f.WaitPods({"fl1-aggregation-0", "fl1-train-0-0"}));
    REQUIRE(f.WaitStatus([](const Json& s) { return ConditionIs(s, kSpecValidCondition, "True"); }));
    CHECK_FALSE(f.Status().contains("reason"));
  }
  SECTION("unknown model") {
    f.env.Create(api::resources::Datasets(), DatasetObject("ds0", "edge-0", "/data/a/t.txt"));
    f.WaitInCache("ds0");
    Json job = FlJob("fl1", Json::array({TrainingWorker("ds0", {{"nodeName", "edge-0"}})}));
    job["spec"]["aggregationWorker"]["model"]["name"] = "missing-model";
    f.env.Create(Jobs(), job);
    REQUIRE(f.WaitStatus([](const Json& s) { return ConditionIs(s, kSpecValidCondition, "False"); }));
    CHECK_THAT(FindStatusCondition(f.Status(), kSpecValidCondition)->message,
               Catch::Contains("Model \"missing-model\" does not exist"));
    CHECK(f.Status()["reason"] == "ModelNotFound");
    CHECK(f.env.Events("fl1", "ModelNotFound").size() == 1);
    CHECK(f.Pods().empty());
    CHECK_FALSE(f.env.edge().Holds("edge-0", kJobRef));
  }
  SECTION("missing template") {
    f.env.Create(api::resources::Datasets(), DatasetObject("ds0", "edge-0", "/data/a/t.txt"));
    f.WaitInCache("ds0");
    Json job = FlJob("fl1", Json::array({TrainingWorker("ds0", {{"nodeName", "edge-0"}})}));
    job["spec"]["aggregationWorker"].erase("template");
    f.env.Create(Jobs(), job);
    REQUIRE(f.WaitStatus([](const Json& s) { return ConditionIs(s, kSpecValidCondition, "False"); }));
    CHECK_THAT(FindStatusCondition(f.Status(), kSpecValidCondition)->message,
               Catch::Contains("spec.aggregationWorker.template"));
    CHECK(f.Pods().empty());
  }
  SECTION("bad node affinity and a selector label the user overrides") {
    f.env.Create(api::resources::Datasets(), DatasetObject("ds0", "edge-0", "/data/a/t.txt"));
    f.WaitInCache("ds0");
    Json affinity = {{"nodeAffinity",
                      {{"requiredDuringSchedulingIgnoredDuringExecution",
                        {{"nodeSelectorTerms",
                          Json::array({{{"matchExpressions",
                                         Json::array({{{"key", "zone"}, {"operator", "Near"}}})}}})}}}}}};
    f.env.Create(Jobs(), FlJob("fl1", Json::array({TrainingWorker("ds0", {{"affinity", affinity}})})));
    REQUIRE(f.WaitStatus([](const Json& s) { return ConditionIs(s, kSpecValidCondition, "False"); }));
    CHECK_THAT(FindStatusCondition(f.Status(), kSpecValidCondition)->message,
               Catch::Contains("unknown operator \"Near\""));
    CHECK(f.Pods().empty());
  }
  // No retry storm: the invalid job is not reconciled over and over. Reconciles already queued by
  // the last events finish first (the count holds still for 200 ms, bounded by 5 s).
  int writes = f.env.client().CountActions(fakes::Verb::kUpdateStatus);
  for (absl::Time quiet_since = absl::Now(), give_up = absl::Now() + absl::Seconds(5);
       absl::Now() - quiet_since < absl::Milliseconds(200) && absl::Now() < give_up;) {
    absl::SleepFor(absl::Milliseconds(20));
    const int now = f.env.client().CountActions(fakes::Verb::kUpdateStatus);
    if (now != writes) {
      writes = now;
      quiet_since = absl::Now();
    }
  }
  f.env.clock().Advance(absl::Seconds(30));
  CHECK(f.env.client().CountActions(fakes::Verb::kUpdateStatus) <= writes + 1);
}

TEST_CASE("FL: a spec change restarts the pods from the new spec and resets the round") {
  Fixture f;
  Json job = f.env.Create(Jobs(), TwoNodeJob());
  REQUIRE(f.WaitPods(kTwoNodePods));
  f.WaitCached();
  REQUIRE(f.controller->HandleReport("edge-0", WorkerReport(1, job, "fl1-train-0-0",
                                                            {{"currentRound", 4}}))
              .code == ReportOutcome::Code::kAccepted);
  std::map<std::string, std::string> before;
  for (const auto& [name, pod] : f.Pods()) before[name] = kube::Uid(pod);

  Json workers = job["spec"]["trainingWorkers"];
  workers[1]["template"]["spec"]["containers"][0]["env"][0]["value"] = "64";
  f.env.Patch(Jobs(), "default", "fl1", {{"spec", {{"trainingWorkers", workers}}}});
  REQUIRE(Eventually([&] {
    std::map<std::string, Json> pods = f.Pods();
    if (pods.size() != 3) return false;
    for (const auto& [name, pod] : pods) {
      if (before[name] == kube::Uid(pod)) return false;  // Every pod is a new one.
    }
    return EnvOf(pods["fl1-train-1-0"])["batch_size"] == "64";
  }));
  CHECK(f.env.Events("fl1", "SpecChanged").size() == 1);
  REQUIRE(f.WaitStatus([](const Json& s) {
    return !s.contains("currentRound") && s.value("observedGeneration", 0) == 2;
  }));
  // The edge gets the new generation; runPolicy-only edits restart nothing.
  REQUIRE(Eventually([&] {
    return f.env.edge().Get("edge-1", kJobRef)->version().rfind("2-", 0) == 0;
  }));
  std::map<std::string, std::string> after;
  for (const auto& [name, pod] : f.Pods()) after[name] = kube::Uid(pod);
  f.env.Patch(Jobs(), "default", "fl1", {{"spec", {{"runPolicy", {{"backoffLimit", 3}}}}}});
  REQUIRE(f.WaitStatus([](const Json& s) { return s.value("observedGeneration", 0) == 3; }));
  std::map<std::string, std::string> unchanged;
  for (const auto& [name, pod] : f.Pods()) unchanged[name] = kube::Uid(pod);
  CHECK(unchanged == after);
}

TEST_CASE("FL: pods the spec change replaces are not failures while they terminate") {
  Fixture f;
  Json job = f.env.Create(Jobs(), TwoNodeJob());
  REQUIRE(f.WaitPods(kTwoNodePods));
  for (const std::string& pod : kTwoNodePods) {
    // A kubelet keeps a deleted pod through its grace period; the finalizer stands in for it.
    REQUIRE(f.env.client()
                .Patch(Pods(), "default", pod, kube::PatchType::kMerge,
                       {{"metadata", {{"finalizers", {"test/grace"}}}}})
                .ok());
    f.SetPhase(pod, "Running");
  }
  REQUIRE(f.WaitStatus([](const Json& s) {
    const Json* conditions = kube::FindPath(s, "conditions");
    return s.value("active", 0) == 3 && conditions != nullptr && conditions->is_array() &&
           !conditions->empty() && conditions->back()["type"] == "Training" &&
           conditions->back()["status"] == "True";
  }));

  Json workers = job["spec"]["trainingWorkers"];
  workers[1]["template"]["spec"]["containers"][0]["env"][0]["value"] = "64";
  f.env.Patch(Jobs(), "default", "fl1", {{"spec", {{"trainingWorkers", workers}}}});
  REQUIRE(Eventually([&] { return f.Pods().empty(); }));  // all terminating
  f.SetPhase("fl1-train-0-0", "Failed");                 // what the kill left
  REQUIRE(f.WaitStatus([](const Json& s) {
    return s.value("observedGeneration", 0) == 2 && s.value("active", -1) == 0;
  }));
  Json replacing = f.Status();
  INFO(replacing.dump());
  CHECK(replacing.value("failed", 0) == 0);
  for (const Json& c : replacing["conditions"]) {
    CHECK_FALSE((c["type"] == "Training" && c["status"] == "False"));
  }
  CHECK(replacing["conditions"].back()["reason"] == "JobRestarting");

  // The old pods go: the new ones come, and the job runs again.
  for (const std::string& pod : kTwoNodePods) {
    REQUIRE(f.env.client()
                .Patch(Pods(), "default", pod, kube::PatchType::kMerge,
                       {{"metadata", {{"finalizers", nullptr}}}})
                .ok());
  }
  REQUIRE(f.WaitPods(kTwoNodePods));
  for (const std::string& pod : kTwoNodePods) f.SetPhase(pod, "Running");
  REQUIRE(f.WaitStatus([](const Json& s) { return s.value("active", 0) == 3; }));
  Json running = f.Status();
  CHECK(running.value("failed", 0) == 0);
  for (const Json& c : running["conditions"]) {
    CHECK_FALSE((c["type"] == "Training" && c["status"] == "False"));
  }
  CHECK(running["conditions"].back()["status"] == "True");
}

TEST_CASE("FL: a spec change gets through status write conflicts; the round reset is written "
          "before any pod goes") {
  Fixture f;
  Json job = f.env.Create(Jobs(), TwoNodeJob());
  REQUIRE(f.WaitPods(kTwoNodePods));
  REQUIRE(f.WaitStatus([](const Json& s) { return s.value("active", 0) == 3; }));
  f.WaitCached();
  REQUIRE(f.controller->HandleReport("edge-0", WorkerReport(1, job, "fl1-train-0-0",
                                                            {{"currentRound", 4}}))
              .code == ReportOutcome::Code::kAccepted);
  std::map<std::string, std::string> before;
  for (const auto& [name, pod] : f.Pods()) before[name] = kube::Uid(pod);

  // The next status writes of the job conflict twice (another writer got in each time). They are
  // retried at once: a worker waiting between attempts on the (never advanced) fake clock held
  // the job's key, and the spec change behind it, until teardown (the flake this guards).
  f.env.client().ClearActions();
  f.env.client().FailNext(fakes::Verb::kUpdateStatus, 2,
                          kube::ConflictError("federatedlearningjobs.sedna.io", "fl1", "modified"),
                          "federatedlearningjobs.sedna.io");
  Json workers = job["spec"]["trainingWorkers"];
  workers[0]["template"]["spec"]["containers"][0]["env"][0]["value"] = "16";
  f.env.Patch(Jobs(), "default", "fl1", {{"spec", {{"trainingWorkers", workers}}}});
  REQUIRE(Eventually([&] {
    std::map<std::string, Json> pods = f.Pods();
    if (pods.size() != 3) return false;
    for (const auto& [name, pod] : pods) {
      if (before[name] == kube::Uid(pod)) return false;
    }
    return EnvOf(pods["fl1-train-0-0"])["batch_size"] == "16";
  }));
  REQUIRE(f.WaitStatus([](const Json& s) {
    return !s.contains("currentRound") && s.value("observedGeneration", 0) == 2;
  }));
  // A reset written after the deletes would be lost for good when that write failed: the next
  // pass finds no pod of the old spec to tell it a restart happened.
  std::vector<fakes::Action> actions = f.env.client().Actions();
  bool reset_written = false;
  bool pod_deleted = false;
  for (const fakes::Action& a : actions) {
    if (a.verb == fakes::Verb::kDelete && a.resource == "pods") {
      pod_deleted = true;
      break;
    }
    if (a.verb == fakes::Verb::kUpdateStatus && a.resource == "federatedlearningjobs.sedna.io" &&
        a.body.is_object() && !kube::FindPath(a.body, "status.currentRound")) {
      reset_written = true;
    }
  }
  CHECK(pod_deleted);
  CHECK(reset_written);
  CHECK(f.env.Events("fl1", "SpecChanged").size() == 1);
}

TEST_CASE("FL: an old-spec pod that takes its time to terminate neither resets the new round "
          "nor restarts the job again") {
  Fixture f;
  Json job = f.env.Create(Jobs(), TwoNodeJob());
  REQUIRE(f.WaitPods(kTwoNodePods));
  std::map<std::string, std::string> before;
  for (const auto& [name, pod] : f.Pods()) before[name] = kube::Uid(pod);
  // A finalizer keeps fl1-train-0-0 terminating after its delete, as a kubelet's grace period does.
  f.env.Patch(Pods(), "default", "fl1-train-0-0",
              {{"metadata", {{"finalizers", Json::array({"test.nereid.io/hold"})}}}});

  Json workers = job["spec"]["trainingWorkers"];
  workers[1]["template"]["spec"]["containers"][0]["env"][0]["value"] = "64";
  f.env.Patch(Jobs(), "default", "fl1", {{"spec", {{"trainingWorkers", workers}}}});
  // Two pods come back from the new spec; the held one's slot waits for it to go.
  REQUIRE(Eventually([&] {
    std::map<std::string, Json> pods = f.Pods();
    return pods.size() == 2 && pods.count("fl1-aggregation-0") == 1 &&
           pods.count("fl1-train-1-0") == 1 &&
           kube::Uid(pods["fl1-aggregation-0"]) != before["fl1-aggregation-0"] &&
           kube::Uid(pods["fl1-train-1-0"]) != before["fl1-train-1-0"] &&
           EnvOf(pods["fl1-train-1-0"])["batch_size"] == "64";
  }));
  f.WaitInCache("fl1-train-1-0");  // The new pod: the old one left the cache before it was made.

  // The new session reports its first round; later passes (a runPolicy edit) keep it.
  REQUIRE(f.controller->HandleReport("edge-1", WorkerReport(1, job, "fl1-train-1-0",
                                                            {{"currentRound", 1}}))
              .code == ReportOutcome::Code::kAccepted);
  REQUIRE(f.Status().value("currentRound", 0) == 1);
  f.env.Patch(Jobs(), "default", "fl1", {{"spec", {{"runPolicy", {{"backoffLimit", 3}}}}}});
  REQUIRE(f.WaitStatus([](const Json& s) { return s.value("observedGeneration", 0) == 3; }));
  CHECK(f.Status().value("currentRound", 0) == 1);
  CHECK(f.env.Events("fl1", "SpecChanged").size() == 1);

  // Once it is gone, its slot gets a pod of the new spec.
  f.env.Patch(Pods(), "default", "fl1-train-0-0", {{"metadata", {{"finalizers", nullptr}}}});
  REQUIRE(Eventually([&] {
    std::map<std::string, Json> pods = f.Pods();
    return pods.size() == 3 && pods.count("fl1-train-0-0") == 1 &&
           kube::Uid(pods["fl1-train-0-0"]) != before["fl1-train-0-0"] &&
           kube::Annotation(pods["fl1-train-0-0"], fl::kSpecHashAnnotation) ==
               kube::Annotation(pods["fl1-train-1-0"], fl::kSpecHashAnnotation);
  }));
  CHECK(f.Status().value("currentRound", 0) == 1);
  CHECK(f.env.Events("fl1", "SpecChanged").size() == 1);
}

TEST_CASE("FL: a pod deleted from outside is recreated without counting a retry") {
  Fixture f;
  f.env.Create(Jobs(), TwoNodeJob());
  REQUIRE(f.WaitPods(kTwoNodePods));
  const std::string uid = kube::Uid(f.Pods()["fl1-aggregation-0"]);
  f.env.Delete(Pods(), "default", "fl1-aggregation-0");
  REQUIRE(Eventually([&] {
    std::map<std::string, Json> pods = f.Pods();
    return pods.count("fl1-aggregation-0") == 1 && kube::Uid(pods["fl1-aggregation-0"]) != uid;
  }));
  CHECK(f.Status().value("restarts", 0) == 0);
}

TEST_CASE("FL: a deleted job is withdrawn from every node; existing jobs are primed") {
  ControllerEnv env;
  env.Create(api::resources::Datasets(), DatasetObject("ds0", "edge-0", "/data/a/train.txt"));
  env.Create(api::resources::Datasets(), DatasetObject("ds1", "edge-1", "/data/b/train.txt"));
  env.Create(api::resources::Models(), ModelObject("agg-model", "/models/out/model.pb"));
  env.Create(Jobs(), TwoNodeJob());
  auto controller = *FederatedLearningController::Create(env.context());
  env.StartInformers(controller->informers());
  REQUIRE(controller->PrimeEdge().ok());
  CHECK(env.edge().Holds("edge-0", kJobRef));
  CHECK(env.edge().Holds("edge-1", kJobRef));
  CHECK(env.client().Objects(Pods()).empty());  // Priming creates nothing.
  REQUIRE(controller->Start().ok());
  REQUIRE(Eventually([&] { return env.client().Objects(Pods()).size() == 3; }));
  env.Delete(Jobs(), "default", "fl1");
  REQUIRE(Eventually([&] {
    return !env.edge().Holds("edge-0", kJobRef) && !env.edge().Holds("edge-1", kJobRef);
  }));
  CHECK(controller->PlacedNodes("default/fl1").empty());
  env.StopInformers();  // Before the controller goes.
  controller->Stop();
}

TEST_CASE("FL: Sedna's example with both transmitters: s3 wins, keys by secretKeyRef, an Event") {
  Fixture f;
  const std::string key = "sEcReT-fl-DoNotLeak";
  f.env.Create(kube::resources::Secrets(),
               testing::SednaS3Secret("mysecret", key, "default", "minio:9000"));
  const Json transmitter = {
      {"transmitter",
       {{"ws", Json::object()},
        {"s3", {{"aggDataPath", "s3://bucket/agg"}, {"credentialName", "mysecret"}}}}}};
  f.env.Create(Jobs(), TwoNodeJob(transmitter));
  REQUIRE(f.WaitPods(kTwoNodePods));
  for (const auto& [name, pod] : f.Pods()) {
    INFO(name);
    std::map<std::string, Json> env;
    for (const Json& e : pod["spec"]["containers"][0]["env"]) env[e["name"]] = e;
    CHECK(env["TRANSMITTER"]["value"] == "s3");
    CHECK(env["AGG_DATA_PATH"]["value"] == "s3://bucket/agg");
    CHECK(env["S3_ENDPOINT_URL"]["value"] == "http://minio:9000");
    CHECK(env["SECRET_ACCESS_KEY"]["valueFrom"]["secretKeyRef"]["name"] == "mysecret");
    CHECK(pod.dump().find(key) == std::string::npos);
  }
  REQUIRE(Eventually([&] { return f.env.Events("fl1", "WsTransmitterIgnored").size() == 1; }));

  SECTION("a Secret that does not exist: CredentialsNotFound, no pods for that job") {
    f.env.Create(Jobs(), FlJob("fl2", Json::array({TrainingWorker("ds0", {{"nodeName", "edge-0"}})}),
                               {{"transmitter",
                                 {{"s3", {{"aggDataPath", "s3://bucket/agg"},
                                          {"credentialName", "absent"}}}}}}));
    REQUIRE(f.WaitStatus(
        [](const Json& s) { return ConditionIs(s, kSpecValidCondition, "False"); }, "fl2"));
    CHECK(FindStatusCondition(f.Status("fl2"), kSpecValidCondition)->reason ==
          "CredentialsNotFound");
    CHECK(f.Pods("fl2").empty());
    REQUIRE(Eventually([&] { return f.env.Events("fl2", "CredentialsNotFound").size() == 1; }));
  }
}

}  // namespace
}  // namespace nereid::gm
