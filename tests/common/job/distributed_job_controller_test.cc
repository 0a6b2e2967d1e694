// The DistributedJob controller (globalmanager/controllers) on a FakeKubeClient with real informers
// and the kube::Controller runner: Sedna labels and env on pods, unparsable objects, the edge
// placement hook, and forgetting deleted jobs.

#include "globalmanager/controllers/distributed_job_controller.h"

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "common/job/distributed_job.h"
#include "common/kube/shared_informer_factory.h"
#include "tests/common/job/job_harness.h"
#include "tests/fakes/eventually.h"
#include "tests/fakes/fake_kube_client.h"

namespace nereid::gm {
namespace {

using fakes::Eventually;
using job::testing::JobJson;
using job::testing::TaskJson;
using kube::Json;

class RecordingSink final : public JobPlacementSink {
 public:
  void PodsPlaced(const job::JobIdentity& job, const std::vector<PlacedTaskPod>& pods) override {
    absl::MutexLock lock(&mu_);
    placed_[job.Key()] = pods;
  }
  void JobRemoved(const std::string& kind, const std::string& key) override {
    absl::MutexLock lock(&mu_);
    placed_.erase(key);
    removed_.push_back(kind + " " + key);
  }
  std::map<std::string, std::vector<PlacedTaskPod>> Placed() {
    absl::MutexLock lock(&mu_);
    return placed_;
  }
  std::vector<std::string> Removed() {
    absl::MutexLock lock(&mu_);
    return removed_;
  }

 private:
  absl::Mutex mu_;
  std::map<std::string, std::vector<PlacedTaskPod>> placed_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> removed_ ABSL_GUARDED_BY(mu_);
};

// The controller as the GM daemon runs it: on a shared informer factory, its placements to `sink`.
class Fixture {
 public:
  Fixture() : factory_(&client) {
    ControllerContext context;
    context.client = &client;
    context.informers = &factory_;
    context.settings.ns = "ns";
    context.settings.workers = 2;
    DistributedJobOptions options;
    options.placement = &sink;
    absl::StatusOr<std::unique_ptr<DistributedJobController>> created =
        DistributedJobController::Create(context, options);
    REQUIRE(created.ok());
    controller_ = *std::move(created);
    factory_.Start();
    REQUIRE(controller_->Start().ok());
  }
  ~Fixture() {
    factory_.Stop();
    controller_->Stop();
  }

  std::map<std::string, Json> Pods() {
    std::map<std::string, Json> out;
    for (Json& pod : client.Objects(kube::resources::Pods())) {
      std::string name = kube::Name(pod);
      out[name] = std::move(pod);
    }
    return out;
  }
  int64_t Reconciles() const { return controller_->runner().GetStats().reconciles; }
  job::Expectations& expectations() { return controller_->expectations(); }
  job::JobStatus Status(const std::string& name) {
    auto obj = client.Get(job::DistributedJobs(), "ns", name);
    if (!obj.ok()) return {};
    api::FieldReader reader;
    return job::ReadJobStatus(obj->value("status", Json::object()), "status", &reader);
  }

  fakes::FakeKubeClient client{Clock::Real()};
  RecordingSink sink;

 private:
  kube::SharedInformerFactory factory_;
  std::unique_ptr<DistributedJobController> controller_;
};

std::string Env(const Json& pod, const std::string& name) {
  for (const Json& e : pod["spec"]["containers"][0]["env"]) {
    if (e["name"] == name) return e["value"];
  }
  return "<unset>";
}

TEST_CASE("controller: Sedna labels and env, placement reported, deleted jobs forgotten") {
  Fixture f;
  Json job = JobJson("dj", Json::array({TaskJson("learner", "learner", 1),
                                        TaskJson("collector", "collector", 2)}));
  job["spec"]["tasks"][1]["template"]["spec"]["nodeName"] = "edge-0";
  auto created = f.client.Create(job::DistributedJobs(), "ns", job);
  REQUIRE(created.ok());
  REQUIRE(Eventually([&] { return f.Pods().size() == 3; }));
  Json pod = f.Pods()["dj-collector-0"];
  CHECK(pod["metadata"]["labels"]["distributedjob.sedna.io/name"] == "dj");
  CHECK(pod["metadata"]["labels"]["distributedjob.sedna.io/uid"] == kube::Uid(*created));
  CHECK(pod["metadata"]["labels"]["distributedjob.sedna.io/worker-type"] == "collector");
  CHECK(Env(pod, "NAMESPACE") == "ns");
  CHECK(Env(pod, "JOB_NAME") == "dj");
  CHECK(Env(pod, "WORKER_NAME") == "dj-collector-0");
  CHECK(Env(pod, "LC_SERVER") == "http://localhost:9100");
  CHECK(Env(pod, "NEREID_TASK_NAME") == "collector");
  REQUIRE(Eventually([&] { return f.Status("dj").phase == "Pending"; }));

  // The collectors are pinned to edge-0: the hook hears about exactly those.
  REQUIRE(Eventually([&] {
    auto placed = f.sink.Placed();
    return placed.count("ns/dj") == 1 && placed["ns/dj"].size() == 2;
  }));
  PlacedTaskPod first = f.sink.Placed()["ns/dj"][0];
  CHECK(first.node == "edge-0");
  CHECK(first.task == "collector");
  CHECK(first.task_type == "collector");

  REQUIRE(f.client.Delete(job::DistributedJobs(), "ns", "dj").ok());
  REQUIRE(Eventually([&] { return !f.sink.Removed().empty(); }));
  CHECK(f.sink.Removed()[0] == "DistributedJob ns/dj");
  CHECK(f.expectations().Pending("ns/dj") == std::pair<int, int>{0, 0});
}

TEST_CASE("controller: an object that does not parse fails with InvalidSpec, once") {
  Fixture f;
  Json job = JobJson("bad", Json::array({TaskJson("w", "none", 1)}));
  job["spec"]["tasks"][0]["replicas"] = "three";
  job["spec"]["runPolicy"] = {{"cleanPodPolicy", "Sometimes"}};
  REQUIRE(f.client.Create(job::DistributedJobs(), "ns", job).ok());
  REQUIRE(Eventually([&] { return f.Status("bad").IsFailed(); }));
  job::JobStatus st = f.Status("bad");
  const api::Condition* failed = st.FindCondition("Failed");
  REQUIRE(failed != nullptr);
  CHECK(failed->reason == "InvalidSpec");
  CHECK(failed->message.find("spec.tasks[0].replicas") != std::string::npos);
  CHECK(failed->message.find("spec.runPolicy.cleanPodPolicy") != std::string::npos);
  CHECK(st.phase == "Failed");
  CHECK(f.Pods().empty());
  // Not rewritten on later passes.
  int patches = f.client.CountActions(fakes::Verb::kPatch, "distributedjobs.sedna.io");
  int status_updates =
      f.client.CountActions(fakes::Verb::kUpdateStatus, "distributedjobs.sedna.io");
  int64_t reconciles = f.Reconciles();
  REQUIRE(f.client
              .Patch(job::DistributedJobs(), "ns", "bad", kube::PatchType::kMerge,
                     {{"metadata", {{"labels", {{"touch", "1"}}}}}})
              .ok());
  REQUIRE(Eventually([&] { return f.Reconciles() > reconciles; }));  // It looked again...
  CHECK(f.client.CountActions(fakes::Verb::kPatch, "distributedjobs.sedna.io") ==
        patches + 1);  // ...and wrote nothing (the +1 is the label patch above)...
  CHECK(f.client.CountActions(fakes::Verb::kUpdateStatus, "distributedjobs.sedna.io") ==
        status_updates);  // ...neither as a patch nor as a status update.
}

}  // namespace
}  // namespace nereid::gm
