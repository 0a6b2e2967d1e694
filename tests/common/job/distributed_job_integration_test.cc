// Integration: a real devapiserver process, DistributedJobs applied with the real kubectl, and the
// DistributedJob controller in-process (RestClient + shared informers + the GM's controller + event
// recorder, real clock). Pod phases advance through the pods' status subresource, as a kubelet
// would write them. Every wait is bounded.

#include <catch2/catch.hpp>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/job/distributed_job.h"
#include "common/kube/event_recorder.h"
#include "common/kube/resource.h"
#include "common/kube/rest_client.h"
#include "common/kube/shared_informer_factory.h"
#include "globalmanager/controllers/distributed_job_controller.h"
#include "tests/support/devapiserver_process.h"
#include "tests/support/subprocess.h"

namespace nereid::job {
namespace {

using kube::Json;
using nereid::testing::WaitFor;

const std::string kSourceDir = NEREID_SOURCE_DIR;
constexpr absl::Duration kWait = absl::Seconds(15);

// The PodGroup CRD Volcano installs (just enough of it: served, status subresource).
constexpr const char* kPodGroupCrd = R"({
  "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
  "metadata": {"name": "podgroups.scheduling.volcano.sh"},
  "spec": {"group": "scheduling.volcano.sh", "scope": "Namespaced",
    "names": {"kind": "PodGroup", "plural": "podgroups", "singular": "podgroup", "listKind": "PodGroupList"},
    "versions": [{"name": "v1beta1", "served": true, "storage": true, "subresources": {"status": {}},
      "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}})";

nereid::testing::DevApiServerProcess::Options ApiOptions() {
  nereid::testing::DevApiServerProcess::Options options;
  options.devapiserver = NEREID_DEVAPISERVER_BIN;
  options.kubectl = NEREID_KUBECTL;
  options.source_dir = kSourceDir;
  options.temp_prefix = "nereid-dj";
  options.served_timeout = kWait;
  return options;
}

class Cluster {
 public:
  Cluster() : api_(ApiOptions()) { api_.ApplyCrds({"distributedjobs"}, DistributedJobs()); }
  ~Cluster() {
    StopController();
  }

  void StartController() {
    factory_ = std::make_unique<kube::SharedInformerFactory>(api_.client());
    kube::EventRecorderOptions recorder_options;
    recorder_options.component = "nereid-gm";
    recorder_ = std::make_unique<kube::EventRecorder>(api_.client(), recorder_options);
    gm::ControllerContext context;
    context.client = api_.client();
    context.informers = factory_.get();
    context.events = recorder_.get();
    context.settings.workers = 1;
    gm::DistributedJobOptions options;
    options.library.gang_discovery_ttl = absl::Milliseconds(200);
    options.library.reconcile.gang_poll_interval = absl::Milliseconds(200);
    options.library.reconcile.gang_recheck_interval = absl::Milliseconds(300);
    absl::StatusOr<std::unique_ptr<gm::DistributedJobController>> created =
        gm::DistributedJobController::Create(context, options);
    REQUIRE(created.ok());
    controller_ = *std::move(created);
    recorder_->Start();
    factory_->Start();
    REQUIRE(controller_->Start().ok());
  }
  void StopController() {
    if (factory_ != nullptr) factory_->Stop();
    if (controller_ != nullptr) controller_->Stop();
    if (recorder_ != nullptr) recorder_->Stop();
    controller_.reset();
  }

  std::string Ok(std::vector<std::string> args, std::string_view stdin_data = "") {
    return api_.KubectlOk(args, stdin_data);
  }
  void Apply(const Json& object) { Ok({"apply", "-f", "-"}, object.dump()); }

  std::optional<Json> Job(const std::string& name) {
    auto job = api_.client()->Get(DistributedJobs(), "default", name);
    if (!job.ok()) return std::nullopt;
    return *job;
  }
  JobStatus Status(const std::string& name) {
    std::optional<Json> job = Job(name);
    if (!job.has_value()) return {};
    auto parsed = DistributedJob::FromJson(*job);
    return parsed.ok() ? parsed->status : JobStatus{};
  }
  // Waits until `predicate` holds for the job's status; the last status is INFO'd on failure.
  bool WaitStatus(const std::string& name, const std::function<bool(const JobStatus&)>& predicate) {
    JobStatus last;
    bool ok = WaitFor(
        [&] {
          last = Status(name);
          return predicate(last);
        },
        kWait);
    if (!ok) UNSCOPED_INFO("last status of " << name << ": " << last.ToJson().dump());
    return ok;
  }
  std::map<std::string, Json> PodsOf(const std::string& job) {
    kube::ListOptions options;
    options.label_selector = "sedna.io/job-name=" + job;
    std::map<std::string, Json> out;
    auto list = api_.client()->List(kube::resources::Pods(), "default", options);
    if (!list.ok()) return out;
    for (Json& pod : list->items) {
      std::string name = kube::Name(pod);
      out[name] = std::move(pod);
    }
    return out;
  }
  bool WaitPods(const std::string& job, size_t n) {
    return WaitFor([&] { return PodsOf(job).size() == n; }, kWait);
  }
  bool ServiceExists(const std::string& name) {
    return api_.client()->Get(kube::resources::Services(), "default", name).ok();
  }
  void PodStatus(const std::string& pod, const Json& status) {
    auto r = api_.client()->Patch(kube::resources::Pods(), "default", pod, kube::PatchType::kMerge,
                                  {{"status", status}}, "status");
    REQUIRE(r.ok());
  }
  void AllPods(const std::string& job, const std::string& phase) {
    for (const auto& [name, pod] : PodsOf(job)) PodStatus(name, {{"phase", phase}});
  }
  void FailPod(const std::string& pod, int exit_code) {
    PodStatus(pod, {{"phase", "Failed"},
                    {"containerStatuses",
                     Json::array({{{"name", "main"},
                                   {"restartCount", 0},
                                   {"state", {{"terminated", {{"exitCode", exit_code}}}}}}})}});
  }

  kube::KubeClient* client() { return api_.client(); }

 private:
  nereid::testing::DevApiServerProcess api_;
  std::unique_ptr<kube::SharedInformerFactory> factory_;
  std::unique_ptr<kube::EventRecorder> recorder_;
  std::unique_ptr<gm::DistributedJobController> controller_;
};

Json Task(const std::string& name, const std::string& type, int replicas,
          const std::string& restart_policy = "") {
  Json t = {
      {"name", name},
      {"type", type},
      {"replicas", replicas},
      {"template",
       {{"spec", {{"containers", Json::array({{{"name", "main"}, {"image", "busybox"}}})}}}}}};
  if (!restart_policy.empty()) t["restartPolicy"] = restart_policy;
  return t;
}

Json Job(const std::string& name, Json tasks, Json run_policy = Json::object()) {
  Json spec = {{"tasks", std::move(tasks)}};
  if (!run_policy.empty()) spec["runPolicy"] = std::move(run_policy);
  return {{"apiVersion", "sedna.io/v1alpha1"},
          {"kind", "DistributedJob"},
          {"metadata", {{"name", name}}},
          {"spec", std::move(spec)}};
}

std::string Env(const Json& pod, const std::string& name) {
  for (const Json& e : pod["spec"]["containers"][0]["env"]) {
    if (e["name"] == name) return e["value"];
  }
  return "<unset>";
}

TEST_CASE("DistributedJob end to end on devapiserver") {
  Cluster cluster;
  cluster.StartController();

  SECTION("pods, Service, labels, env, status following pod phases, cleanup, printer columns") {
    cluster.Apply(
        Job("di", Json::array({Task("learner", "learner", 1), Task("collector", "collector", 2)})));
    REQUIRE(cluster.WaitPods("di", 3));
    REQUIRE(WaitFor([&] { return cluster.ServiceExists("di"); }, kWait));
    std::optional<Json> job = cluster.Job("di");
    REQUIRE(job.has_value());
    Json pod = cluster.PodsOf("di")["di-collector-1"];
    CHECK(pod["metadata"]["labels"]["sedna.io/task-type"] == "collector");
    CHECK(pod["metadata"]["labels"]["sedna.io/task-index"] == "1");
    CHECK(pod["metadata"]["labels"]["distributedjob.sedna.io/name"] == "di");
    CHECK(pod["metadata"]["labels"]["distributedjob.sedna.io/worker-type"] == "collector");
    CHECK(kube::ControllerOf(pod)->uid == kube::Uid(*job));
    CHECK(pod["spec"]["hostname"] == "di-collector-1");
    CHECK(pod["spec"]["subdomain"] == "di");
    CHECK(Env(pod, "NEREID_RANK") == "2");
    CHECK(Env(pod, "NEREID_LEARNER_HOSTS") == "di-learner-0.di.default.svc");
    CHECK(Env(pod, "WORKER_NAME") == "di-collector-1");
    CHECK(Env(pod, "JOB_NAME") == "di");
    REQUIRE(cluster.WaitStatus("di", [](const JobStatus& s) {
      return s.phase == "Pending" && s.task_summary == "learner 0/1, collector 0/2" &&
             s.task_status.count("collector") && s.task_status.at("collector").count("Pending") &&
             s.task_status.at("collector").at("Pending") == 2;
    }));
    CHECK(cluster.Status("di").IsConditionTrue("Created"));
    // A worker report as the GM's report path writes it (distributed_job_edge.cc: a merge patch of
    // one status.workerReports entry): kept by the CRD schema and by the controller's own status
    // writes (key by key).
    const Json worker_report = {{"worker", "di-learner-0"}, {"node", "edge-0"},
                                {"kind", "train"},          {"status", "running"},
                                {"time", "2026-01-01T00:00:00Z"},
                                {"results", Json::array({{{"reward", 0.5}}})}};
    REQUIRE(cluster.client()
                ->Patch(DistributedJobs(), "default", "di", kube::PatchType::kMerge,
                        {{"status", {{"workerReports", {{"learner", worker_report}}}}}}, "status")
                .ok());

    cluster.AllPods("di", "Running");
    REQUIRE(cluster.WaitStatus("di", [](const JobStatus& s) {
      return s.phase == "Running" && s.IsConditionTrue("Running") &&
             s.task_summary == "learner 1/1, collector 2/2";
    }));
    std::optional<Json> reported = cluster.Job("di");
    REQUIRE(reported.has_value());
    CHECK((*reported)["status"]["workerReports"]["learner"] == worker_report);
    std::string table = cluster.Ok({"get", "dj", "di", "--no-headers"});
    CHECK(table.find("Running") != std::string::npos);
    CHECK(table.find("learner 1/1, collector 2/2") != std::string::npos);

    cluster.AllPods("di", "Succeeded");
    REQUIRE(cluster.WaitStatus("di", [](const JobStatus& s) {
      return s.phase == "Succeeded" && s.IsSucceeded() && !s.IsConditionTrue("Running") &&
             s.completion_time.has_value();
    }));
    // cleanPodPolicy Running (default): the succeeded pods stay, the Service goes.
    CHECK(WaitFor([&] { return !cluster.ServiceExists("di"); }, kWait));
    CHECK(cluster.PodsOf("di").size() == 3);
  }

  SECTION("a failing pod is recreated and counted until backoffLimit; cleanPodPolicy All") {
    cluster.Apply(Job("retry", Json::array({Task("w", "none", 2, "ExitCode")}),
                      {{"backoffLimit", 1}, {"cleanPodPolicy", "All"}}));
    REQUIRE(cluster.WaitPods("retry", 2));
    cluster.AllPods("retry", "Running");
    std::string uid = kube::Uid(cluster.PodsOf("retry")["retry-w-0"]);
    cluster.FailPod("retry-w-0", 137);
    REQUIRE(cluster.WaitStatus("retry", [](const JobStatus& s) { return s.restarts == 1; }));
    REQUIRE(WaitFor(
        [&] {
          auto pods = cluster.PodsOf("retry");
          return pods.count("retry-w-0") == 1 && kube::Uid(pods["retry-w-0"]) != uid;
        },
        kWait));
    cluster.FailPod("retry-w-0", 137);
    REQUIRE(cluster.WaitStatus("retry", [](const JobStatus& s) {
      const api::Condition* failed = s.FindCondition("Failed");
      return failed != nullptr && failed->status == "True" &&
             failed->reason == "BackoffLimitExceeded" && s.phase == "Failed";
    }));
    CHECK(cluster.WaitPods("retry", 0));  // All: nothing left.
    CHECK(cluster.Status("retry").restarts == 1);
  }

  SECTION("activeDeadlineSeconds fires on its timer; TTL deletes a finished job") {
    cluster.Apply(Job("deadline", Json::array({Task("w", "none", 2)}),
                      {{"activeDeadlineSeconds", 2}, {"cleanPodPolicy", "None"}}));
    cluster.Apply(
        Job("ttl", Json::array({Task("w", "none", 1, "Never")}), {{"ttlSecondsAfterFinished", 1}}));
    REQUIRE(cluster.WaitPods("deadline", 2));
    cluster.AllPods("deadline", "Running");
    REQUIRE(cluster.WaitPods("ttl", 1));
    cluster.AllPods("ttl", "Succeeded");
    // Nothing else happens to "deadline": only the timer can fail it.
    REQUIRE(cluster.WaitStatus("deadline", [](const JobStatus& s) {
      const api::Condition* failed = s.FindCondition("Failed");
      return failed != nullptr && failed->status == "True" && failed->reason == "DeadlineExceeded";
    }));
    CHECK(cluster.WaitPods("deadline", 0));  // Running pods stopped even with None.
    REQUIRE(WaitFor([&] { return !cluster.Job("ttl").has_value(); }, kWait));
    CHECK(cluster.WaitPods("ttl", 0));  // Garbage-collected with their owner.
  }

  SECTION("suspend tears down, resume recreates") {
    cluster.Apply(Job("sus", Json::array({Task("w", "none", 2)})));
    REQUIRE(cluster.WaitPods("sus", 2));
    cluster.Ok(
        {"patch", "dj", "sus", "--type=merge", "-p", R"({"spec":{"runPolicy":{"suspend":true}}})"});
    REQUIRE(cluster.WaitStatus("sus", [](const JobStatus& s) {
      return s.phase == "Suspended" && s.IsConditionTrue("Suspended");
    }));
    CHECK(cluster.WaitPods("sus", 0));
    cluster.Ok({"patch", "dj", "sus", "--type=merge", "-p",
                R"({"spec":{"runPolicy":{"suspend":false}}})"});
    REQUIRE(cluster.WaitPods("sus", 2));
    CHECK(cluster.WaitStatus("sus", [](const JobStatus& s) {
      const api::Condition* c = s.FindCondition("Suspended");
      return c != nullptr && c->status == "False" && c->reason == "JobResumed";
    }));
  }

  SECTION("gang scheduling: unavailable without Volcano, a PodGroup once its CRD is served") {
    cluster.Apply(Job("nogang", Json::array({Task("w", "none", 2)}),
                      {{"schedulingPolicy", {{"minAvailable", 2}}}}));
    REQUIRE(cluster.WaitPods("nogang", 2));
    REQUIRE(cluster.WaitStatus("nogang", [](const JobStatus& s) {
      const api::Condition* c = s.FindCondition("GangSchedulingUnavailable");
      return c != nullptr && c->status == "True" && c->reason == "PodGroupNotServed";
    }));
    CHECK(cluster.PodsOf("nogang")["nogang-w-0"]["spec"].value("schedulerName", "") != "volcano");

    cluster.Apply(Json::parse(kPodGroupCrd));
    REQUIRE(WaitFor(
        [&] { return cluster.client()->IsServed(kube::resources::PodGroups()).value_or(false); },
        kWait));
    // The running job notices Volcano on its recheck timer: its condition goes (and from then on
    // the controller's discovery cache says PodGroups are served).
    REQUIRE(cluster.WaitStatus("nogang", [](const JobStatus& s) {
      return s.FindCondition("GangSchedulingUnavailable") == nullptr;
    }));
    cluster.Apply(Job("gang", Json::array({Task("w", "none", 3)}),
                      {{"schedulingPolicy", {{"minAvailable", 2}, {"queue", "q1"}}}}));
    REQUIRE(WaitFor(
        [&] { return cluster.client()->Get(kube::resources::PodGroups(), "default", "gang").ok(); },
        kWait));
    Json pg = *cluster.client()->Get(kube::resources::PodGroups(), "default", "gang");
    CHECK(pg["spec"]["minMember"] == 2);
    CHECK(pg["spec"]["queue"] == "q1");
    CHECK(kube::ControllerOf(pg)->name == "gang");
    CHECK(cluster.PodsOf("gang").empty());  // Waiting for Volcano to admit the gang.
    REQUIRE(cluster.client()
                ->Patch(kube::resources::PodGroups(), "default", "gang", kube::PatchType::kMerge,
                        {{"status", {{"phase", "Inqueue"}}}}, "status")
                .ok());
    REQUIRE(cluster.WaitPods("gang", 3));
    Json pod = cluster.PodsOf("gang")["gang-w-0"];
    CHECK(pod["spec"]["schedulerName"] == "volcano");
    CHECK(pod["metadata"]["annotations"]["scheduling.k8s.io/group-name"] == "gang");
  }

  SECTION("an invalid job (two learners) fails with InvalidSpec and creates nothing") {
    cluster.Apply(Job("bad", Json::array({Task("a", "learner", 1), Task("b", "learner", 1)})));
    REQUIRE(cluster.WaitStatus("bad", [](const JobStatus& s) {
      const api::Condition* c = s.FindCondition("Failed");
      return c != nullptr && c->status == "True" && c->reason == "InvalidSpec";
    }));
    CHECK(cluster.PodsOf("bad").empty());
  }
}

}  // namespace
}  // namespace nereid::job
