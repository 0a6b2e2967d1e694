// Integration: a real devapiserver process, Sedna's CRDs and the examples applied with the real
// kubectl, and the FederatedLearningJob controller in-process (RestClient + shared informers +
// event recorder, real clock; the edge hub replaced by the recording FakeEdgeDispatcher). Pod
// phases advance through the pods' status subresource, as a kubelet would write them (the
// devapiserver runs no pods). Every wait is bounded.

#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/api/sedna_contract.h"
#include "common/kube/event_recorder.h"
#include "common/kube/resource.h"
#include "common/kube/rest_client.h"
#include "common/kube/shared_informer_factory.h"
#include "globalmanager/controllers/controller_context.h"
#include "globalmanager/controllers/federated_learning_controller.h"
#include "tests/integration/in_process_gm.h"
#include "tests/support/devapiserver_process.h"
#include "tests/support/subprocess.h"

namespace nereid::gm {
namespace {

using kube::Json;
using nereid::testing::WaitFor;

const std::string kSourceDir = NEREID_SOURCE_DIR;
constexpr absl::Duration kWait = absl::Seconds(20);
constexpr char kJob[] = "surface-defect-detection";
constexpr char kJobRef[] = "FederatedLearningJob/default/surface-defect-detection";

class Cluster {
 public:
  Cluster() : api_(testing::DevApiOptions("nereid-fl", kWait)), gm_(api_.client()) {
    api_.ApplyCrds({"datasets", "models", "federatedlearningjobs"},
                   api::resources::FederatedLearningJobs());
  }
  void StartController() {
    gm_.Add(FederatedLearningController::Create(gm_.Context()));
    gm_.Start(kWait);
  }
  void StopController() { gm_.Stop(); }

  std::string Ok(std::vector<std::string> args) { return api_.KubectlOk(args); }

  Json Status() {
    return testing::StatusOf(*api_.client(), api::resources::FederatedLearningJobs(), kJob);
  }
  bool WaitStatus(const std::function<bool(const Json&)>& predicate) {
    Json last;
    bool ok = WaitFor(
        [&] {
          last = Status();
          return predicate(last);
        },
        kWait);
    if (!ok) UNSCOPED_INFO("last status: " << last.dump());
    return ok;
  }
  std::map<std::string, Json> Pods() {
    kube::ListOptions options;
    options.label_selector = std::string("federatedlearningjob.sedna.io/name=") + kJob;
    std::map<std::string, Json> out;
    auto list = api_.client()->List(kube::resources::Pods(), "default", options);
    if (!list.ok()) return out;
    for (Json& pod : list->items) {
      if (kube::IsBeingDeleted(pod)) continue;
      std::string name = kube::Name(pod);
      out[name] = std::move(pod);
    }
    return out;
  }
  void PodPhase(const std::string& pod, const std::string& phase) {
    auto r = api_.client()->Patch(kube::resources::Pods(), "default", pod, kube::PatchType::kMerge,
                                  {{"status", {{"phase", phase}}}}, "status");
    INFO(r.status().ToString());
    REQUIRE(r.ok());
  }
  bool HasEvent(const std::string& reason) {
    return testing::HasEvent(*api_.client(), kJob, reason);
  }

  kube::KubeClient* client() { return api_.client(); }
  testing::FakeEdgeDispatcher& edge() { return gm_.edge(); }

 private:
  nereid::testing::DevApiServerProcess api_;
  testing::InProcessGm gm_;
};

std::string Env(const Json& pod, const std::string& name) {
  for (const Json& e : pod["spec"]["containers"][0].value("env", Json::array())) {
    if (e["name"] == name) return e.value("value", "");
  }
  return "<unset>";
}

const std::vector<std::string> kPods = {"surface-defect-detection-aggregation-0",
                                        "surface-defect-detection-train-0-0",
                                        "surface-defect-detection-train-1-0"};

bool HasPods(Cluster& cluster, const std::vector<std::string>& names) {
  std::map<std::string, Json> pods = cluster.Pods();
  if (pods.size() != names.size()) return false;
  for (const std::string& n : names) {
    if (pods.count(n) == 0) return false;
  }
  return true;
}

TEST_CASE("FederatedLearningJob end to end on devapiserver with kubectl") {
  Cluster cluster;
  cluster.StartController();
  cluster.Ok({"apply", "-f", kSourceDir + "/examples/dataset.yaml"});
  cluster.Ok({"apply", "-f", kSourceDir + "/examples/model.yaml"});
  cluster.Ok({"apply", "-f", kSourceDir + "/examples/federated-learning-job.yaml"});

  // Pods with Sedna's labels, env and owner; the aggregation Service; the edge told.
  REQUIRE(WaitFor([&] { return HasPods(cluster, kPods); }, kWait));
  std::map<std::string, Json> pods = cluster.Pods();
  const Json& agg = pods[kPods[0]];
  CHECK(agg["metadata"]["labels"]["federatedlearningjob.sedna.io/worker-type"] == "aggregation");
  CHECK(kube::ControllerOf(agg)->kind == "FederatedLearningJob");
  CHECK(Env(agg, "PARTICIPANTS_COUNT") == "2");
  CHECK(Env(agg, "exit_round") == "3");  // The user's env is kept.
  const Json& train = pods[kPods[1]];
  CHECK(train["spec"]["nodeName"] == "edge-0");
  CHECK(train["spec"]["hostNetwork"] == true);
  CHECK(Env(train, "AGG_IP") == "surface-defect-detection-aggregation.default");
  CHECK(Env(train, "TRAIN_DATASET_URL") == "/home/data/data/surface_defect/edge-0/train_data.txt");
  CHECK(Env(train, "DATASET_NAME") == "surface-defect-dataset-edge-0");
  REQUIRE(WaitFor(
      [&] {
        return cluster.client()
            ->Get(kube::resources::Services(), "default", "surface-defect-detection-aggregation")
            .ok();
      },
      kWait));
  REQUIRE(WaitFor(
      [&] { return cluster.edge().Holds("edge-0", kJobRef) && cluster.edge().Holds("edge-1", kJobRef); },
      kWait));
  std::string columns = cluster.Ok({"get", "fl", kJob});
  CHECK(columns.find("PHASE") != std::string::npos);

  // Running once every pod runs.
  REQUIRE(cluster.WaitStatus([](const Json& s) { return s.value("phase", "") == "Pending"; }));
  for (const std::string& pod : kPods) cluster.PodPhase(pod, "Running");
  REQUIRE(cluster.WaitStatus([](const Json& s) { return s.value("phase", "") == "Running"; }));
  CHECK(cluster.Ok({"get", "fl", kJob, "-o", "jsonpath={.status.phase}"}) == "Running");

  // A failed training pod is recreated and counted.
  const std::string old_uid = kube::Uid(cluster.Pods()[kPods[2]]);
  cluster.PodPhase(kPods[2], "Failed");
  REQUIRE(WaitFor(
      [&] {
        std::map<std::string, Json> now = cluster.Pods();
        return now.count(kPods[2]) == 1 && kube::Uid(now[kPods[2]]) != old_uid;
      },
      kWait));
  REQUIRE(cluster.WaitStatus([](const Json& s) { return s.value("restarts", 0) == 1; }));
  CHECK(cluster.HasEvent("JobRestarting"));
  cluster.PodPhase(kPods[2], "Running");

  // Succeeded when both training workers finished.
  cluster.PodPhase(kPods[1], "Succeeded");
  cluster.PodPhase(kPods[2], "Succeeded");
  REQUIRE(cluster.WaitStatus([](const Json& s) { return s.value("phase", "") == "Succeeded"; }));
  Json done = cluster.Status();
  CHECK(done["conditions"].back()["type"] == "Complete");
  CHECK(done.contains("completionTime"));
  CHECK(done["succeeded"] == 3);  // The library counts the still-running aggregator as done.
  CHECK(cluster.HasEvent("JobSucceeded"));

  // Delete: the pods are garbage-collected and the edge forgets the job.
  cluster.Ok({"delete", "fl", kJob});
  REQUIRE(WaitFor([&] { return cluster.Pods().empty(); }, kWait));
  REQUIRE(WaitFor([&] { return !cluster.edge().Holds("edge-0", kJobRef); }, kWait));
  CHECK_FALSE(cluster.edge().Holds("edge-1", kJobRef));
}

}  // namespace
}  // namespace nereid::gm
