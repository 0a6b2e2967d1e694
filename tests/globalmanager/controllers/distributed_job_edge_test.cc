// The DistributedJob's edge half as the GM daemon wires it (MakeDistributedJobController on a
// ControllerEnv: FakeKubeClient, informers, FakeEdgeDispatcher, a real ReportRouter): template
// placement (nodeName, nodeSelector) announced to the selected edge nodes, bound pods listed on
// their node, moves and deletes Removed, PrimeEdge before the workers start, and worker reports
// reaching status.workerReports without being overwritten by the controller's own status writes;
// and the controller on the common reconcile path (reconcile metrics, Events through RecordEvent).

#include <catch2/catch.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/job/distributed_job.h"
#include "globalmanager/controllers/distributed_job_controller.h"
#include "globalmanager/controllers/report_router.h"
#include "tests/fakes/eventually.h"
#include "tests/globalmanager/controllers/controller_env.h"

namespace nereid::gm {
namespace {

using fakes::Eventually;
using kube::Json;
namespace v1 = edge::v1;

constexpr const char* kKey = "DistributedJob/ns/dj";

Json NodeJson(const std::string& name, Json labels) {
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", name}, {"labels", std::move(labels)}}}};
}

Json Task(const std::string& name, const std::string& type, int replicas, Json pod_spec_extra) {
  Json spec = {{"containers", Json::array({{{"name", "main"}, {"image", "busybox"}}})}};
  spec.update(pod_spec_extra);
  return {{"name", name}, {"type", type}, {"replicas", replicas}, {"template", {{"spec", spec}}}};
}

Json JobObject(Json tasks) {
  return {{"apiVersion", "sedna.io/v1alpha1"},
          {"kind", "DistributedJob"},
          {"metadata", {{"name", "dj"}, {"namespace", "ns"}}},
          {"spec", {{"tasks", std::move(tasks)}}}};
}

class Fixture {
 public:
  Fixture() {
    ReportRouter::Options options;
    options.workers = 1;
    router_ = std::make_unique<ReportRouter>(options);
    env.context().reports = router_.get();
    router_->Start();
  }
  ~Fixture() {
    router_->Stop();
    env.StopInformers();
    if (controller_ != nullptr) controller_->Stop();
  }

  // Creates the controller, syncs its informers, primes the edge registry; starts the workers when
  // `start`.
  void MakeController(bool start = true) {
    absl::StatusOr<std::unique_ptr<GmController>> made = MakeDistributedJobController(env.context());
    REQUIRE(made.ok());
    REQUIRE(*made != nullptr);
    controller_ = *std::move(made);
    env.StartInformers(controller_->informers());
    REQUIRE(controller_->PrimeEdge().ok());
    if (start) REQUIRE(controller_->Start().ok());
  }
  void Start() { REQUIRE(controller_->Start().ok()); }

  std::optional<v1::DistributedJobSpec> SpecOn(const std::string& node) {
    std::optional<v1::Resource> r = env.edge().Get(node, kKey);
    if (!r.has_value()) return std::nullopt;
    return r->distributed_job();
  }
  std::vector<std::string> Nodes() { return env.edge().NodesOf(kKey); }

  ReportOutcome Send(const std::string& node, const std::string& worker, const std::string& status,
                     const std::string& results = "", std::string uid = "", bool resend = false) {
    auto report = std::make_shared<v1::StatusReport>();
    if (!resend) ++seq_;
    report->set_seq(seq_);
    report->mutable_ref()->set_kind("DistributedJob");
    report->mutable_ref()->set_namespace_("ns");
    report->mutable_ref()->set_name("dj");
    report->mutable_ref()->set_uid(uid.empty() ? uid_ : uid);
    v1::WorkerReport* w = report->mutable_worker();
    w->set_worker_name(worker);
    w->set_worker_kind("train");
    w->set_status(status);
    w->set_results_json(results);
    w->mutable_time()->set_seconds(1'700'000'000 + static_cast<int64_t>(seq_));
    return testing::RouteReport(*router_, node, std::move(report));
  }

  Json Status() { return env.Get(job::DistributedJobs(), "ns", "dj").value("status", Json::object()); }
  void CreateJob(Json tasks) {
    Json created = env.Create(job::DistributedJobs(), JobObject(std::move(tasks)));
    uid_ = kube::Uid(created);
  }

  testing::ControllerEnv env;

 private:
  std::unique_ptr<ReportRouter> router_;
  std::unique_ptr<GmController> controller_;
  std::string uid_;
  uint64_t seq_ = 0;
};

const Json kEdge = {{"node-role.kubernetes.io/edge", ""}};

int UpsertsTo(Fixture& f, const std::string& node) {
  int n = 0;
  for (const auto& call : f.env.edge().Calls()) n += call.upsert && call.node == node ? 1 : 0;
  return n;
}

// Writes of the job's status (the library patches its fields, reports update workerReports).
int StatusWrites(Fixture& f) {
  int n = 0;
  for (const auto& action : f.env.client().Actions()) {
    const bool status_write =
        action.verb == fakes::Verb::kUpdateStatus ||
        (action.verb == fakes::Verb::kPatch && action.subresource == "status");
    n += status_write && action.resource == "distributedjobs.sedna.io" ? 1 : 0;
  }
  return n;
}

int64_t Active(const Json& status, const std::string& task) {
  const Json* active = kube::FindPath(status, "replicaStatuses." + task + ".active");
  return active != nullptr && active->is_number() ? active->get<int64_t>() : 0;
}

TEST_CASE("distributedjob edge: template nodeName and bound pods announce the job per node") {
  Fixture f;
  f.env.Create(kube::resources::Nodes(), NodeJson("edge-0", kEdge));
  f.env.Create(kube::resources::Nodes(), NodeJson("edge-1", kEdge));
  f.env.Create(kube::resources::Nodes(), NodeJson("cloud-0", Json::object()));
  f.CreateJob(Json::array({Task("learner", "learner", 1, Json::object()),
                           Task("collector", "collector", 2, {{"nodeName", "edge-0"}})}));

  // PrimeEdge (no workers yet) already put the template's node into the registry.
  f.MakeController(/*start=*/false);
  REQUIRE(f.Nodes() == std::vector<std::string>{"edge-0"});
  f.Start();

  // The collector pods are created bound to edge-0 (their template's nodeName) and listed there.
  REQUIRE(Eventually([&] {
    auto spec = f.SpecOn("edge-0");
    return spec.has_value() && spec->tasks_size() == 1 && spec->tasks(0).pods_size() == 2;
  }));
  v1::DistributedJobSpec spec = *f.SpecOn("edge-0");
  CHECK(spec.node_name() == "edge-0");
  CHECK(spec.tasks(0).name() == "collector");
  CHECK(spec.tasks(0).type() == "collector");
  CHECK(spec.tasks(0).replicas() == 2);
  CHECK(spec.tasks(0).pods(0) == "dj-collector-0");
  CHECK(spec.tasks(0).pods(1) == "dj-collector-1");
  std::optional<v1::Resource> resource = f.env.edge().Get("edge-0", kKey);
  CHECK(resource->ref().uid() == kube::Uid(f.env.Get(job::DistributedJobs(), "ns", "dj")));

  const int upserts_edge0 = UpsertsTo(f, "edge-0");
  // The learner selects no node: its pod scheduled onto a cloud node announces nothing there; onto
  // an edge node it does (that node's LC relays the worker's reports).
  f.env.Patch(kube::resources::Pods(), "ns", "dj-learner-0", {{"spec", {{"nodeName", "cloud-0"}}}});
  f.env.Patch(kube::resources::Pods(), "ns", "dj-learner-0", {{"spec", {{"nodeName", "edge-1"}}}});
  REQUIRE(Eventually([&] { return f.SpecOn("edge-1").has_value(); }));
  CHECK(f.Nodes() == std::vector<std::string>{"edge-0", "edge-1"});
  CHECK_FALSE(f.env.edge().Holds("cloud-0", kKey));
  CHECK(f.SpecOn("edge-1")->tasks_size() == 1);
  CHECK(f.SpecOn("edge-1")->tasks(0).name() == "learner");
  CHECK(f.SpecOn("edge-1")->tasks(0).pods(0) == "dj-learner-0");
  // edge-0 was not sent the object again for a pod bound elsewhere.
  CHECK(UpsertsTo(f, "edge-0") == upserts_edge0);

  // Deleting the job removes it from every node.
  f.env.Delete(job::DistributedJobs(), "ns", "dj");
  REQUIRE(Eventually([&] { return f.Nodes().empty(); }));
}

TEST_CASE("distributedjob edge: nodeSelector follows node labels; moves are Removed") {
  Fixture f;
  f.env.Create(kube::resources::Nodes(),
               NodeJson("edge-0", {{"node-role.kubernetes.io/edge", ""}, {"zone", "a"}}));
  f.env.Create(kube::resources::Nodes(),
               NodeJson("edge-1", {{"node-role.kubernetes.io/edge", ""}, {"zone", "b"}}));
  // A cloud node in zone a is not an edge node: never a candidate.
  f.env.Create(kube::resources::Nodes(), NodeJson("cloud-0", {{"zone", "a"}}));
  f.CreateJob(Json::array(
      {Task("collector", "collector", 3, {{"nodeSelector", {{"zone", "a"}}}})}));
  f.MakeController();
  REQUIRE(Eventually([&] { return f.Nodes() == std::vector<std::string>{"edge-0"}; }));
  CHECK(f.SpecOn("edge-0")->tasks(0).pods_size() == 0);  // Not scheduled yet.

  // Relabel: zone a moves from edge-0 to edge-1 → announced to edge-1, removed from edge-0.
  f.env.Patch(kube::resources::Nodes(), "", "edge-0", {{"metadata", {{"labels", {{"zone", "b"}}}}}});
  f.env.Patch(kube::resources::Nodes(), "", "edge-1", {{"metadata", {{"labels", {{"zone", "a"}}}}}});
  REQUIRE(Eventually([&] { return f.Nodes() == std::vector<std::string>{"edge-1"}; }));
  bool removed_from_edge0 = false;
  for (const auto& call : f.env.edge().Calls()) {
    removed_from_edge0 = removed_from_edge0 || (!call.upsert && call.node == "edge-0");
  }
  CHECK(removed_from_edge0);

  // A template edit to a nodeName moves the task there.
  Json tasks = Json::array({Task("collector", "collector", 3, {{"nodeName", "edge-0"}})});
  f.env.Patch(job::DistributedJobs(), "ns", "dj", {{"spec", {{"tasks", tasks}}}});
  // Pods of the old template are not bound anywhere, so only the new node remains.
  REQUIRE(Eventually([&] { return f.Nodes() == std::vector<std::string>{"edge-0"}; }));
}

TEST_CASE("distributedjob edge: worker reports reach status.workerReports") {
  Fixture f;
  f.env.Create(kube::resources::Nodes(), NodeJson("edge-0", kEdge));
  f.CreateJob(Json::array({Task("learner", "learner", 1, Json::object()),
                           Task("collector", "collector", 2, {{"nodeName", "edge-0"}})}));
  f.MakeController();
  REQUIRE(Eventually([&] { return f.Status().value("phase", "") == "Pending"; }));

  ReportOutcome ok = f.Send("edge-0", "dj-collector-1", "running", R"([{"reward": 0.5}])");
  CHECK(ok.code == ReportOutcome::Code::kAccepted);
  Json report = f.Status()["workerReports"]["collector"];
  CHECK(report["worker"] == "dj-collector-1");
  CHECK(report["node"] == "edge-0");
  CHECK(report["kind"] == "train");
  CHECK(report["status"] == "running");
  CHECK(report["results"] == Json::parse(R"([{"reward": 0.5}])"));
  CHECK_FALSE(report.contains("resultsTruncated"));
  CHECK(report["time"].get<std::string>().rfind("2023-11-14T", 0) == 0);

  // The controller's own status writes (a pod starts running) keep the report.
  REQUIRE(f.env.client()
              .Patch(kube::resources::Pods(), "ns", "dj-collector-0", kube::PatchType::kMerge,
                     {{"status", {{"phase", "Running"}}}}, "status")
              .ok());
  REQUIRE(Eventually([&] { return Active(f.Status(), "collector") == 1; }));
  CHECK(f.Status()["workerReports"]["collector"]["worker"] == "dj-collector-1");

  // The latest report per task wins; results too large (or not JSON) are dropped and flagged.
  CHECK(f.Send("edge-0", "dj-collector-0", "completed", std::string(5000, '1')).code ==
        ReportOutcome::Code::kAccepted);
  report = f.Status()["workerReports"]["collector"];
  CHECK(report["worker"] == "dj-collector-0");
  CHECK(report["status"] == "completed");
  CHECK_FALSE(report.contains("results"));
  CHECK(report["resultsTruncated"] == true);
  CHECK(f.Send("edge-0", "dj-learner-0", "ready", "{not json").code ==
        ReportOutcome::Code::kAccepted);
  CHECK(f.Status()["workerReports"]["learner"]["resultsTruncated"] == true);
  CHECK(f.Status()["workerReports"].size() == 2);

  // The same report again (a resend after a lost ACK) writes nothing once the cache has it.
  REQUIRE(Eventually([&] {
    const int before = StatusWrites(f);
    return f.Send("edge-0", "dj-learner-0", "ready", "{not json", "", /*resend=*/true).code ==
               ReportOutcome::Code::kAccepted &&
           StatusWrites(f) == before;
  }));

  // Not a pod of a task, another job's uid, or a job that is gone: rejected (the LC drops it).
  CHECK(f.Send("edge-0", "dj-other-0", "running").reason == "UnknownWorker");
  CHECK(f.Send("edge-0", "dj-collector-x", "running").reason == "UnknownWorker");
  CHECK(f.Send("edge-0", "dj-collector-0", "running", "", "another-uid").reason == "ObjectGone");
  f.env.Delete(job::DistributedJobs(), "ns", "dj");
  REQUIRE(Eventually([&] {
    return f.Send("edge-0", "dj-collector-0", "running").reason == "ObjectGone";
  }));
}

// DistributedJob runs on the controllers' own reconcile path: its reconciles are counted in
// nereid_gm_reconcile_total under its name, and its Events go through RecordEvent (the involved
// object's kind filled in).
TEST_CASE("distributedjob: reconcile metrics and Events like every controller") {
  Fixture f;
  Json job = JobObject(Json::array());
  job["spec"]["tasks"] = "not a list";  // Unparsable: Failed/InvalidSpec with a Warning Event.
  f.env.Create(job::DistributedJobs(), job);
  f.MakeController();

  std::vector<Json> events;
  REQUIRE(Eventually([&] {
    events = f.env.Events("dj", "InvalidSpec");
    return !events.empty();
  }));
  CHECK(events[0]["type"] == "Warning");
  CHECK(events[0]["involvedObject"]["kind"] == "DistributedJob");
  CHECK(events[0]["involvedObject"]["apiVersion"] == "sedna.io/v1alpha1");
  REQUIRE(Eventually([&] {
    return f.env.metrics().ReconcileCount("distributedjob",
                                          ControllerMetrics::ReconcileResult::kSuccess) >= 1;
  }));
  CHECK(f.env.metrics().ReconcileCount("distributedjob",
                                       ControllerMetrics::ReconcileResult::kError) == 0);
}

}  // namespace
}  // namespace nereid::gm
