// VideoAnalyticsJob and ReidJob controllers (InferenceJobController) on the fake API
// (controller_env.h): children with Sedna's names, labels, env and ports; status following pod
// phases; backoffLimit, activeDeadlineSeconds, suspend, TTL, completions; spec changes; invalid
// specs; a missing Model; recreation of deleted children; edge placement and worker reports.

#include <catch2/catch.hpp>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "common/api/inference_job.h"
#include "common/api/sedna_contract.h"
#include "common/kube/errors.h"
#include "globalmanager/controllers/inference_job_controller.h"
#include "globalmanager/controllers/reid_job_controller.h"
#include "globalmanager/controllers/report_router.h"
#include "globalmanager/controllers/s3_credentials.h"
#include "globalmanager/controllers/video_analytics_controller.h"
#include "tests/fakes/eventually.h"
#include "tests/globalmanager/controllers/controller_env.h"

namespace nereid::gm {
namespace {

using fakes::Eventually;
using kube::Json;
using testing::ControllerEnv;
using testing::ModelObject;
using testing::ReportThroughHub;

const kube::Resource& VaJobs() { return api::resources::VideoAnalyticsJobs(); }
const kube::Resource& ReidJobs() { return api::resources::ReidJobs(); }
const kube::Resource& Pods() { return kube::resources::Pods(); }
const kube::Resource& Services() { return kube::resources::Services(); }

Json PodSpec(Json extra = Json::object()) {
  Json spec = {{"containers",
                Json::array({{{"name", "detection"},
                              {"image", "kubeedge/videoanalytics:v0.5.0"},
                              {"env", Json::array({{{"name", "fps"}, {"value", "5"}}})}}})},
               {"restartPolicy", "Never"}};
  spec.update(extra);
  return spec;
}

Json VaJob(const std::string& name, Json extra_spec = Json::object(),
           Json pod_spec = PodSpec()) {
  Json spec = {{"model", {{"name", "detector"}}}, {"template", {{"spec", std::move(pod_spec)}}}};
  spec.update(extra_spec);
  return {{"apiVersion", std::string(api::kApiVersion)},
          {"kind", "VideoAnalyticsJob"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"spec", std::move(spec)}};
}

Json ReidJob(const std::string& name, Json extra_spec = Json::object()) {
  Json spec = {{"backoffLimit", 5}, {"template", {{"spec", PodSpec()}}}};
  spec.update(extra_spec);
  return {{"apiVersion", std::string(api::kApiVersion)},
          {"kind", "ReidJob"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"spec", std::move(spec)}};
}

Json NodeObject(const std::string& name, std::map<std::string, std::string> labels) {
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", name}, {"labels", labels}}},
          {"spec", Json::object()}};
}

std::map<std::string, std::string> EnvOf(const Json& pod) {
  std::map<std::string, std::string> env;
  const Json* list = kube::FindPath(pod["spec"]["containers"][0], "env");
  if (list == nullptr) return env;
  for (const Json& e : *list) env[e.value("name", "")] = e.value("value", "");
  return env;
}

struct Fixture {
  ControllerEnv env;
  const kube::Resource& jobs;
  std::unique_ptr<InferenceJobController> controller;

  // `reports`, when given, is the router the controller registers with.
  explicit Fixture(const InferenceJobKind& kind = VideoAnalyticsJobKind(), bool with_model = true,
                   const std::vector<Json>& nodes = {}, ReportRouter* reports = nullptr)
      : jobs(*kind.resource) {
    env.context().reports = reports;
    if (with_model) {
      env.Create(api::resources::Models(), ModelObject("detector", "/data/models/yolox.pth"));
    }
    for (const Json& node : nodes) env.Create(kube::resources::Nodes(), node);
    controller = env.Run(InferenceJobController::Create(env.context(), kind));
  }
  ~Fixture() { env.StopInformersAndController(*controller); }

  std::map<std::string, Json> Owned(const kube::Resource& resource, const std::string& job) {
    std::map<std::string, Json> out;
    for (const Json& child : env.client().Objects(resource)) {
      std::optional<kube::OwnerReference> owner = kube::ControllerOf(child);
      if (owner.has_value() && owner->name == job && !kube::IsBeingDeleted(child)) {
        out[kube::Name(child)] = child;
      }
    }
    return out;
  }
  std::set<std::string> Names(const kube::Resource& resource, const std::string& job) {
    std::set<std::string> names;
    for (const auto& [name, child] : Owned(resource, job)) names.insert(name);
    return names;
  }
  bool WaitPods(const std::set<std::string>& names, const std::string& job) {
    bool ok = Eventually([&] { return Names(Pods(), job) == names; });
    if (!ok) {
      std::string have;
      for (const std::string& n : Names(Pods(), job)) have += n + " ";
      UNSCOPED_INFO("pods: " << have);
    }
    return ok;
  }
  Json Status(const std::string& name) { return env.StatusOf(jobs, name); }
  bool WaitStatus(const std::string& name, const std::function<bool(const Json&)>& predicate) {
    Json last;
    bool ok = Eventually([&] {
      last = Status(name);
      return predicate(last);
    });
    if (!ok) UNSCOPED_INFO("last status: " << last.dump());
    return ok;
  }
  bool WaitPhase(const std::string& name, const std::string& phase) {
    return WaitStatus(name, [&](const Json& s) { return s.value("phase", "") == phase; });
  }
  void SetPhase(const std::string& pod, const std::string& phase) {
    absl::StatusOr<Json> patched =
        env.client().Patch(Pods(), "default", pod, kube::PatchType::kMerge,
                           {{"status", {{"phase", phase}}}}, "status");
    INFO(patched.status().ToString());
    REQUIRE(patched.ok());
  }
};

const Json& LastCondition(const Json& status) { return status["conditions"].back(); }

TEST_CASE("VA: a pod and Service 4000 with Sedna's names, labels, env and owner") {
  Fixture f;
  Json job = f.env.Create(VaJobs(), VaJob("va", {{"kafkaSupport", true}}));
  REQUIRE(f.WaitPods({"va-videoanalytics-0"}, "va"));
  REQUIRE(Eventually([&] { return f.Names(Services(), "va").count("va-videoanalytics") == 1; }));

  Json pod = f.Owned(Pods(), "va")["va-videoanalytics-0"];
  const Json& labels = pod["metadata"]["labels"];
  CHECK(labels["videoanalyticsjob.sedna.io/name"] == "va");
  CHECK(labels["videoanalyticsjob.sedna.io/uid"] == kube::Uid(job));
  CHECK(labels["videoanalyticsjob.sedna.io/worker-type"] == "videoanalytics");
  std::optional<kube::OwnerReference> owner = kube::ControllerOf(pod);
  REQUIRE(owner.has_value());
  CHECK(owner->kind == "VideoAnalyticsJob");
  CHECK(owner->uid == kube::Uid(job));
  CHECK(pod["spec"]["restartPolicy"] == "Never");

  std::map<std::string, std::string> env = EnvOf(pod);
  CHECK(env["NAMESPACE"] == "default");
  CHECK(env["JOB_NAME"] == "va");
  CHECK(env["LC_SERVER"] == f.env.context().settings.lc_server);
  CHECK_FALSE(env["WORKER_NAME"].empty());
  CHECK(env["MODEL_NAME"] == "detector");
  CHECK(env["MODEL_URL"] == "/home/data/data/models/yolox.pth");
  CHECK(env["KAFKA_ENABLED"] == "true");
  CHECK(env["fps"] == "5");  // The user's own env stays.

  Json svc = f.Owned(Services(), "va")["va-videoanalytics"];
  REQUIRE(svc["spec"]["ports"].size() == 1);
  CHECK(svc["spec"]["ports"][0]["port"] == 4000);
  CHECK(svc["spec"]["ports"][0]["name"] == "tcp-0");
  CHECK(svc["spec"]["selector"]["videoanalyticsjob.sedna.io/worker-type"] == "videoanalytics");
  CHECK(svc["spec"]["selector"]["videoanalyticsjob.sedna.io/uid"] == kube::Uid(job));
  CHECK(kube::ControllerOf(svc)->uid == kube::Uid(job));
}

TEST_CASE("VA: Starting, then Running from the pod phase, then Completed with a completionTime") {
  Fixture f;
  f.env.Create(VaJobs(), VaJob("va"));
  REQUIRE(f.WaitPods({"va-videoanalytics-0"}, "va"));
  REQUIRE(f.WaitStatus("va", [](const Json& s) {
    return s.value("phase", "") == "Pending" && s.contains("conditions") &&
           LastCondition(s)["type"] == "Starting";
  }));
  CHECK(f.Status("va")["active"] == 1);  // A Pending pod is active, as Sedna counts.

  f.SetPhase("va-videoanalytics-0", "Running");
  REQUIRE(f.WaitPhase("va", "Running"));
  Json running = f.Status("va");
  CHECK(LastCondition(running)["type"] == "Running");
  CHECK(LastCondition(running)["status"] == "True");
  CHECK(running.contains("startTime"));

  f.SetPhase("va-videoanalytics-0", "Succeeded");
  REQUIRE(f.WaitPhase("va", "Succeeded"));
  Json done = f.Status("va");
  CHECK(LastCondition(done)["type"] == "Completed");
  CHECK(LastCondition(done)["reason"] == "JobSucceeded");
  CHECK(done["succeeded"] == 1);
  CHECK(done["active"] == 0);
  CHECK(done.contains("completionTime"));
  CHECK(done["conditions"].size() <= api::kMaxConditions);
  CHECK(f.env.Events("va", "JobSucceeded").size() == 1);
  // The finished job's Services go; its succeeded pod stays for its logs.
  REQUIRE(Eventually([&] { return f.Names(Services(), "va").empty(); }));
  CHECK(f.Names(Pods(), "va") == std::set<std::string>{"va-videoanalytics-0"});
}

TEST_CASE("VA: a failed pod is replaced up to backoffLimit, then BackoffLimitExceeded") {
  Fixture f;
  f.env.Create(VaJobs(), VaJob("va", {{"backoffLimit", 1}}));
  REQUIRE(f.WaitPods({"va-videoanalytics-0"}, "va"));
  const std::string first = kube::Uid(f.Owned(Pods(), "va")["va-videoanalytics-0"]);
  f.SetPhase("va-videoanalytics-0", "Failed");
  REQUIRE(Eventually([&] {
    std::map<std::string, Json> pods = f.Owned(Pods(), "va");
    return pods.count("va-videoanalytics-0") == 1 &&
           kube::Uid(pods["va-videoanalytics-0"]) != first;
  }));
  REQUIRE(f.WaitStatus("va", [](const Json& s) { return s.value("restarts", 0) == 1; }));
  CHECK(f.Status("va")["phase"] != "Failed");
  // restartPolicy Never on the replacement too: a failure is a new pod, as batch/v1.
  CHECK(f.Owned(Pods(), "va")["va-videoanalytics-0"]["spec"]["restartPolicy"] == "Never");

  f.SetPhase("va-videoanalytics-0", "Failed");
  REQUIRE(f.WaitPhase("va", "Failed"));
  Json failed = f.Status("va");
  CHECK(LastCondition(failed)["type"] == "Failed");
  CHECK(LastCondition(failed)["reason"] == "BackoffLimitExceeded");
  CHECK(failed["failed"] == 1);
  CHECK(f.env.Events("va", "BackoffLimitExceeded").size() == 1);
}

TEST_CASE("VA: restartPolicy OnFailure restarts in place; Always is refused with a reason") {
  SECTION("OnFailure") {
    Fixture f;
    f.env.Create(VaJobs(), VaJob("va", Json::object(), PodSpec({{"restartPolicy", "OnFailure"}})));
    REQUIRE(f.WaitPods({"va-videoanalytics-0"}, "va"));
    CHECK(f.Owned(Pods(), "va")["va-videoanalytics-0"]["spec"]["restartPolicy"] == "OnFailure");
  }
  SECTION("Always") {
    Fixture f;
    f.env.Create(VaJobs(), VaJob("va", Json::object(), PodSpec({{"restartPolicy", "Always"}})));
    REQUIRE(f.WaitStatus("va", [](const Json& s) { return s.contains("conditions"); }));
    Json status = f.Status("va");
    CHECK(LastCondition(status)["type"] == "SpecValid");
    CHECK(LastCondition(status)["status"] == "False");
    CHECK(LastCondition(status)["reason"] == "InvalidSpec");
    CHECK(LastCondition(status)["message"].get<std::string>().find(
              "spec.template.spec.restartPolicy") != std::string::npos);
    REQUIRE(Eventually([&] { return f.env.Events("va", "InvalidSpec").size() == 1; }));
    CHECK(f.Names(Pods(), "va").empty());
    // Fixed: the job runs.
    f.env.Patch(VaJobs(), "default", "va",
                {{"spec", {{"template", {{"spec", {{"restartPolicy", "Never"}}}}}}}});
    REQUIRE(f.WaitPods({"va-videoanalytics-0"}, "va"));
    REQUIRE(f.WaitStatus("va", [](const Json& s) {
      for (const Json& c : s["conditions"]) {
        if (c["type"] == "SpecValid") return c["status"] == "True";
      }
      return false;
    }));
  }
}

TEST_CASE("VA: a missing Model is SpecValid=False/ModelNotFound and an Event; then the job starts") {
  Fixture f(VideoAnalyticsJobKind(), /*with_model=*/false);
  f.env.Create(VaJobs(), VaJob("va"));
  REQUIRE(f.WaitStatus("va", [](const Json& s) {
    return s.contains("conditions") && LastCondition(s)["reason"] == "ModelNotFound";
  }));
  Json waiting = f.Status("va");
  CHECK(waiting["phase"] == "Pending");
  CHECK(LastCondition(waiting)["type"] == "SpecValid");
  CHECK(LastCondition(waiting)["status"] == "False");
  CHECK(LastCondition(waiting)["message"].get<std::string>().find("detector") !=
        std::string::npos);
  REQUIRE(Eventually([&] { return f.env.Events("va", "ModelNotFound").size() == 1; }));
  CHECK(f.Names(Pods(), "va").empty());

  f.env.Create(api::resources::Models(), ModelObject("detector", "/data/models/yolox.pth"));
  REQUIRE(f.WaitPods({"va-videoanalytics-0"}, "va"));
  REQUIRE(f.WaitStatus("va", [](const Json& s) { return LastCondition(s)["type"] == "Starting"; }));
  CHECK(f.env.Events("va", "ModelNotFound").size() == 1);
}

TEST_CASE("VA: an s3 Model's Secret is waited for (Forbidden, then missing); then the initializer") {
  Fixture f(VideoAnalyticsJobKind(), /*with_model=*/false);
  Json model = ModelObject("detector", "s3://models/yolox.pth");
  model["spec"]["credentialName"] = "mysecret";
  f.env.Create(api::resources::Models(), model);
  f.env.client().FailNext(fakes::Verb::kGet, 1000, kube::StatusFromResponse(403, ""), "secrets");
  f.env.Create(VaJobs(), VaJob("va"));
  REQUIRE(f.WaitStatus("va", [](const Json& s) {
    return s.contains("conditions") && LastCondition(s)["reason"] == "CredentialsForbidden";
  }));
  CHECK(f.Status("va")["phase"] == "Pending");
  CHECK(LastCondition(f.Status("va"))["type"] == "SpecValid");
  REQUIRE(Eventually([&] { return f.env.Events("va", "CredentialsForbidden").size() == 1; }));
  CHECK(f.Names(Pods(), "va").empty());

  // Allowed now, but the Secret does not exist yet.
  f.env.client().ClearFailures();
  f.env.clock().Advance(kCredentialRecheckPeriod + absl::Seconds(1));
  REQUIRE(f.WaitStatus("va", [](const Json& s) {
    return LastCondition(s)["reason"] == "CredentialsNotFound";
  }));
  CHECK(f.Names(Pods(), "va").empty());

  f.env.Create(kube::resources::Secrets(), testing::SednaS3Secret("mysecret", "DoNotLeak"));
  f.env.clock().Advance(kCredentialRecheckPeriod + absl::Seconds(1));
  REQUIRE(f.WaitPods({"va-videoanalytics-0"}, "va"));
  const Json pod = f.Owned(Pods(), "va").at("va-videoanalytics-0");
  REQUIRE(pod["spec"]["initContainers"].size() == 1);
  const Json& init = pod["spec"]["initContainers"][0];
  CHECK(init["name"] == "storage-initializer");
  CHECK(init["args"] == Json::array({"s3://models/yolox.pth", "/downloads/models/"}));
  bool key_by_ref = false;
  for (const Json& e : init["env"]) {
    if (e["name"] == "SECRET_ACCESS_KEY") {
      key_by_ref = e["valueFrom"]["secretKeyRef"] ==
                   Json{{"name", "mysecret"}, {"key", "SECRET_ACCESS_KEY"}};
    }
  }
  CHECK(key_by_ref);
  CHECK(EnvOf(pod).at("MODEL_URL") == "/downloads/models/yolox.pth");
  CHECK(pod.dump().find("DoNotLeak") == std::string::npos);
}

TEST_CASE("VA: a Model deleted after the job started: the status keeps following the pod") {
  Fixture f;
  f.env.Create(VaJobs(), VaJob("va"));
  REQUIRE(f.WaitPods({"va-videoanalytics-0"}, "va"));
  REQUIRE(f.WaitStatus("va", [](const Json& s) {
    return s.contains("conditions") && !s["conditions"].empty() &&
           LastCondition(s)["type"] == "Starting";
  }));

  f.env.Delete(api::resources::Models(), "default", "detector");
  // Said once, as a Warning; the job is not sent back to Waiting. Converges lets fake time pass:
  // a reconcile or an Event send retried on the clock would otherwise wait forever (with a
  // real-time wait this failed once in a CI replica).
  REQUIRE(f.env.Converges([&] { return f.env.Events("va", "ModelNotFound").size() == 1; }));
  f.SetPhase("va-videoanalytics-0", "Running");
  REQUIRE(f.WaitPhase("va", "Running"));
  CHECK(f.Status("va")["active"] == 1);
  f.SetPhase("va-videoanalytics-0", "Succeeded");
  REQUIRE(f.WaitPhase("va", "Succeeded"));
  Json done = f.Status("va");
  CHECK(LastCondition(done)["type"] == "Completed");
  CHECK(done["succeeded"] == 1);
  for (const Json& c : done["conditions"]) CHECK(c["type"] != "Waiting");
  // The pod was neither restarted nor replaced.
  CHECK(f.Names(Pods(), "va") == std::set<std::string>{"va-videoanalytics-0"});
  CHECK(f.env.Events("va", "ModelNotFound").size() == 1);
}

TEST_CASE("VA: activeDeadlineSeconds fails the job on the clock") {
  Fixture f;
  f.env.Create(VaJobs(), VaJob("va", {{"activeDeadlineSeconds", 60}}));
  REQUIRE(f.WaitPods({"va-videoanalytics-0"}, "va"));
  f.SetPhase("va-videoanalytics-0", "Running");
  REQUIRE(f.WaitPhase("va", "Running"));
  f.env.clock().Advance(absl::Seconds(61));
  REQUIRE(f.WaitPhase("va", "Failed"));
  CHECK(LastCondition(f.Status("va"))["reason"] == "DeadlineExceeded");
  // The running pod is stopped.
  REQUIRE(Eventually([&] { return f.Names(Pods(), "va").empty(); }));
}

TEST_CASE("VA: suspend deletes the pods and Services, resume brings them back") {
  Fixture f;
  f.env.Create(VaJobs(), VaJob("va", {{"suspend", true}}));
  REQUIRE(f.WaitPhase("va", "Suspended"));
  CHECK(LastCondition(f.Status("va"))["type"] == "Waiting");
  CHECK(f.Names(Pods(), "va").empty());
  CHECK(f.Names(Services(), "va").empty());

  f.env.Patch(VaJobs(), "default", "va", {{"spec", {{"suspend", false}}}});
  REQUIRE(f.WaitPods({"va-videoanalytics-0"}, "va"));
  REQUIRE(Eventually([&] { return f.Names(Services(), "va").count("va-videoanalytics") == 1; }));
  f.env.Patch(VaJobs(), "default", "va", {{"spec", {{"suspend", true}}}});
  REQUIRE(f.WaitPhase("va", "Suspended"));
  REQUIRE(Eventually([&] { return f.Names(Pods(), "va").empty(); }));
  REQUIRE(Eventually([&] { return f.Names(Services(), "va").empty(); }));
}

TEST_CASE("VA: completions runs that many pods at once and succeeds when all did") {
  Fixture f;
  f.env.Create(VaJobs(), VaJob("va", {{"completions", 2}, {"parallelism", 2}}));
  REQUIRE(f.WaitPods({"va-videoanalytics-0", "va-videoanalytics-1"}, "va"));
  f.SetPhase("va-videoanalytics-0", "Succeeded");
  REQUIRE(f.WaitStatus("va", [](const Json& s) { return s.value("succeeded", 0) == 1; }));
  CHECK(f.Status("va")["phase"] != "Succeeded");
  f.SetPhase("va-videoanalytics-1", "Succeeded");
  REQUIRE(f.WaitPhase("va", "Succeeded"));
}

TEST_CASE("VA: a spec change recreates the pod from the new template") {
  Fixture f;
  f.env.Create(VaJobs(), VaJob("va"));
  REQUIRE(f.WaitPods({"va-videoanalytics-0"}, "va"));
  const std::string first = kube::Uid(f.Owned(Pods(), "va")["va-videoanalytics-0"]);
  Json spec = PodSpec();
  spec["containers"][0]["env"] = Json::array({{{"name", "fps"}, {"value", "10"}}});
  f.env.Patch(VaJobs(), "default", "va", {{"spec", {{"template", {{"spec", spec}}}}}});
  REQUIRE(Eventually([&] {
    std::map<std::string, Json> pods = f.Owned(Pods(), "va");
    return pods.count("va-videoanalytics-0") == 1 &&
           kube::Uid(pods["va-videoanalytics-0"]) != first &&
           EnvOf(pods["va-videoanalytics-0"])["fps"] == "10";
  }));
  CHECK(f.env.Events("va", "SpecChanged").size() >= 1);
  CHECK(f.Status("va").value("restarts", 0) == 0);  // Not a failure.
}

TEST_CASE("VA: deleted children are recreated") {
  Fixture f;
  f.env.Create(VaJobs(), VaJob("va"));
  REQUIRE(f.WaitPods({"va-videoanalytics-0"}, "va"));
  REQUIRE(Eventually([&] { return f.Names(Services(), "va").count("va-videoanalytics") == 1; }));
  const std::string svc_uid = kube::Uid(f.Owned(Services(), "va")["va-videoanalytics"]);
  const std::string pod_uid = kube::Uid(f.Owned(Pods(), "va")["va-videoanalytics-0"]);
  f.env.Delete(Services(), "default", "va-videoanalytics");
  f.env.Delete(Pods(), "default", "va-videoanalytics-0");
  REQUIRE(Eventually([&] {
    std::map<std::string, Json> svcs = f.Owned(Services(), "va");
    std::map<std::string, Json> pods = f.Owned(Pods(), "va");
    return svcs.count("va-videoanalytics") == 1 &&
           kube::Uid(svcs["va-videoanalytics"]) != svc_uid &&
           pods.count("va-videoanalytics-0") == 1 &&
           kube::Uid(pods["va-videoanalytics-0"]) != pod_uid;
  }));
  CHECK(f.Status("va").value("restarts", 0) == 0);
}

TEST_CASE("VA: ttlSecondsAfterFinished deletes the finished job") {
  Fixture f;
  f.env.Create(VaJobs(), VaJob("va", {{"ttlSecondsAfterFinished", 30}}));
  REQUIRE(f.WaitPods({"va-videoanalytics-0"}, "va"));
  f.SetPhase("va-videoanalytics-0", "Succeeded");
  REQUIRE(f.WaitPhase("va", "Succeeded"));
  CHECK(f.env.client().Get(VaJobs(), "default", "va").ok());
  f.env.clock().Advance(absl::Seconds(31));
  REQUIRE(Eventually(
      [&] { return absl::IsNotFound(f.env.client().Get(VaJobs(), "default", "va").status()); }));
}

edge::v1::StatusReport WorkerReport(uint64_t seq, const Json& job, const Json& owner_info) {
  edge::v1::StatusReport report;
  report.set_seq(seq);
  report.mutable_ref()->set_kind(kube::StringAt(job, "kind"));
  report.mutable_ref()->set_namespace_("default");
  report.mutable_ref()->set_name(kube::Name(job));
  report.mutable_ref()->set_uid(kube::Uid(job));
  edge::v1::WorkerReport* w = report.mutable_worker();
  w->set_worker_name("videoanalyticsworker-abcde");
  w->set_worker_kind("inference");
  w->set_status("running");
  w->set_owner_info_json(owner_info.dump());
  return report;
}

TEST_CASE("VA: announced to its pinned edge node; reports become bounded status.metrics") {
  Fixture f(VideoAnalyticsJobKind(), true,
            {NodeObject("edge-0", {{"node-role.kubernetes.io/edge", ""}}),
             NodeObject("edge-1", {{"node-role.kubernetes.io/edge", ""}})});
  Json job = f.env.Create(VaJobs(), VaJob("va", Json::object(), PodSpec({{"nodeName", "edge-0"}})));
  const std::string ref = "VideoAnalyticsJob/default/va";
  REQUIRE(Eventually([&] { return f.env.edge().Holds("edge-0", ref); }));
  CHECK_FALSE(f.env.edge().Holds("edge-1", ref));
  std::optional<edge::v1::Resource> sent = f.env.edge().Get("edge-0", ref);
  REQUIRE(sent.has_value());
  CHECK(sent->video_analytics_job().node_name() == "edge-0");
  CHECK(sent->video_analytics_job().worker_type() == "videoanalytics");

  // A pod bound there is named in the spec.
  REQUIRE(f.WaitPods({"va-videoanalytics-0"}, "va"));
  REQUIRE(Eventually([&] {
    std::optional<edge::v1::Resource> r = f.env.edge().Get("edge-0", ref);
    return r.has_value() && r->video_analytics_job().pods_size() == 1 &&
           r->video_analytics_job().pods(0) == "va-videoanalytics-0";
  }));

  ReportOutcome ok =
      f.controller->HandleReport("edge-0", WorkerReport(1, job, {{"fps", 5}, {"objects", "12"},
                                                                {"startTime", "x"}}));
  CHECK(ok.code == ReportOutcome::Code::kAccepted);
  Json metrics = f.Status("va")["metrics"];
  CHECK(metrics == Json::parse(R"([{"key": "fps", "value": "5"},
                                   {"key": "objects", "value": "12"}])"));
  // The controller's own status writes leave the metrics alone.
  f.SetPhase("va-videoanalytics-0", "Running");
  REQUIRE(f.WaitPhase("va", "Running"));
  CHECK(f.Status("va")["metrics"] == metrics);

  // Bounded: at most kMaxInferenceJobMetrics entries, long values cut.
  Json many = Json::object();
  for (int i = 0; i < 100; ++i) many["k" + std::to_string(100 + i)] = std::string(5000, 'x');
  CHECK(f.controller->HandleReport("edge-0", WorkerReport(2, job, many)).code ==
        ReportOutcome::Code::kAccepted);
  Json bounded = f.Status("va")["metrics"];
  CHECK(bounded.size() == api::kMaxInferenceJobMetrics);
  CHECK(bounded[0]["value"].get<std::string>().size() == kMaxMetricValueBytes);

  // Through the hub's ownership check, as every report arrives.
  CHECK(ReportThroughHub(f.env.edge(), *f.controller, "edge-1",
                         WorkerReport(3, job, {{"fps", 1}})).reason == "NotThisNode");
  CHECK(f.controller->HandleReport("edge-0", WorkerReport(4, job, Json::array())).reason ==
        "Invalid");

  f.env.Delete(VaJobs(), "default", "va");
  REQUIRE(Eventually([&] { return !f.env.edge().Holds("edge-0", ref); }));
  CHECK(ReportThroughHub(f.env.edge(), *f.controller, "edge-0",
                         WorkerReport(5, job, {{"fps", 1}})).reason == "ObjectGone");
}

TEST_CASE("ReID: a pod and the Service on 5000 Sedna forgets, no model env") {
  Fixture f(ReidJobKind(), /*with_model=*/false);
  Json job = f.env.Create(ReidJobs(), ReidJob("reid"));
  REQUIRE(f.WaitPods({"reid-reid-0"}, "reid"));
  REQUIRE(Eventually([&] { return f.Names(Services(), "reid").count("reid-reid") == 1; }));
  Json pod = f.Owned(Pods(), "reid")["reid-reid-0"];
  CHECK(pod["metadata"]["labels"]["reidjob.sedna.io/name"] == "reid");
  CHECK(pod["metadata"]["labels"]["reidjob.sedna.io/worker-type"] == "reid");
  std::map<std::string, std::string> env = EnvOf(pod);
  CHECK(env["JOB_NAME"] == "reid");
  CHECK(env.count("MODEL_URL") == 0);
  CHECK(env.count("KAFKA_ENABLED") == 0);
  Json svc = f.Owned(Services(), "reid")["reid-reid"];
  CHECK(svc["spec"]["ports"][0]["port"] == 5000);
  CHECK(svc["spec"]["selector"]["reidjob.sedna.io/worker-type"] == "reid");

  f.SetPhase("reid-reid-0", "Running");
  REQUIRE(f.WaitPhase("reid", "Running"));
  f.SetPhase("reid-reid-0", "Succeeded");
  REQUIRE(f.WaitPhase("reid", "Succeeded"));
  CHECK(LastCondition(f.Status("reid"))["type"] == "Completed");
}

// `report` through the hub's ownership check against `edge`, then `router`, as the edge hub
// hands it over.
ReportOutcome Route(const testing::FakeEdgeDispatcher& edge, ReportRouter& router,
                    const std::string& node, const edge::v1::StatusReport& report) {
  if (std::optional<ReportOutcome> refusal = edge.RefuseForeign(node, report)) return *refusal;
  return testing::RouteReport(router, node, std::make_shared<const edge::v1::StatusReport>(report));
}

TEST_CASE("ReID: worker reports are accepted from the job's node and write no status") {
  ReportRouter router({.workers = 1});
  router.Start();
  Fixture f(ReidJobKind(), /*with_model=*/false,
            {NodeObject("edge-0", {{"node-role.kubernetes.io/edge", ""}}),
             NodeObject("edge-1", {{"node-role.kubernetes.io/edge", ""}})},
            &router);
  auto route = [&](const std::string& node, const edge::v1::StatusReport& report) {
    return Route(f.env.edge(), router, node, report);
  };
  CHECK(router.Handles("ReidJob"));
  CHECK_FALSE(ReidJobKind().reports_to_metrics);  // Accepted, never written.
  Json job = f.env.Create(
      ReidJobs(), ReidJob("reid", {{"template", {{"spec", PodSpec({{"nodeName", "edge-0"}})}}}}));
  const std::string ref = "ReidJob/default/reid";
  REQUIRE(Eventually([&] { return f.env.edge().Holds("edge-0", ref); }));
  REQUIRE(f.WaitStatus("reid", [](const Json& s) { return s.contains("conditions"); }));

  ReportOutcome ok = route("edge-0", WorkerReport(1, job, {{"persons", 3}}));
  INFO(ok.reason << ": " << ok.message);
  CHECK(ok.code == ReportOutcome::Code::kAccepted);
  CHECK_FALSE(f.Status("reid").contains("metrics"));

  // The same checks as for every worker report.
  CHECK(route("edge-1", WorkerReport(2, job, {{"persons", 3}})).reason == "NotThisNode");
  CHECK(route("edge-0", WorkerReport(3, job, Json::array())).reason == "Invalid");
  f.env.Delete(ReidJobs(), "default", "reid");
  REQUIRE(Eventually([&] { return !f.env.edge().Holds("edge-0", ref); }));
  CHECK(route("edge-0", WorkerReport(4, job, {{"persons", 3}})).reason == "ObjectGone");
  router.Stop();
}

TEST_CASE("ReID: an invalid spec fails validation with every field named, and no pods") {
  Fixture f(ReidJobKind(), false);
  f.env.Create(ReidJobs(), ReidJob("reid", {{"completions", 3}, {"parallelism", 1}}));
  REQUIRE(f.WaitStatus("reid", [](const Json& s) { return s.contains("conditions"); }));
  Json status = f.Status("reid");
  CHECK(LastCondition(status)["reason"] == "InvalidSpec");
  CHECK(LastCondition(status)["message"].get<std::string>().find("spec.parallelism") !=
        std::string::npos);
  CHECK(f.Names(Pods(), "reid").empty());
}

}  // namespace
}  // namespace nereid::gm
