#pragma once

// A job controller on a FakeKubeClient for scenario tests: pod and Service informers feed the
// CacheChildLister and the expectations (through ObservingOwnerHandler), JobReconciler runs on a
// FakeClock, and every step first waits until the caches equal the fake API server — so a test
// reads like "given these pods, when it reconciles, then ..." without sleeping. The job object is
// read fresh from the fake each step, as the controller's job informer would eventually have it.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/job/child_lister.h"
#include "common/job/distributed_job.h"
#include "common/job/expectations.h"
#include "common/job/gang.h"
#include "common/job/job_reconciler.h"
#include "common/job/owner_handler.h"
#include "common/kube/controller.h"
#include "common/kube/shared_informer.h"
#include "common/time/fake_clock.h"
#include "tests/fakes/eventually.h"
#include "tests/fakes/fake_kube_client.h"

namespace nereid::job::testing {

using kube::Json;

class NullReconciler final : public kube::Reconciler {
 public:
  absl::StatusOr<kube::ReconcileResult> Reconcile(const std::string&) override {
    return kube::ReconcileResult{};
  }
};

// The harness's status write (the GM's controllers write through gm::WriteStatus): the whole
// .status by a JSON patch, then the status fence.
inline absl::Status WriteJobStatus(kube::KubeClient* client, const kube::Resource& resource,
                                   const Json& object, const Json& status_json,
                                   Expectations* expectations) {
  absl::StatusOr<Json> written = client->Patch(
      resource, kube::Namespace(object), kube::Name(object), kube::PatchType::kJson,
      Json::array({{{"op", "add"}, {"path", "/status"}, {"value", status_json}}}), "status");
  if (!written.ok()) return written.status();
  expectations->ExpectStatus(kube::Key(object), kube::ResourceVersion(*written));
  return absl::OkStatus();
}

inline Json Template(const std::string& container = "main") {
  return {{"spec", {{"containers", Json::array({{{"name", container}, {"image", "busybox"}}})}}}};
}

inline Json TaskJson(const std::string& name, const std::string& type, int replicas,
                     const std::string& restart_policy = "") {
  Json t = {{"name", name}, {"type", type}, {"replicas", replicas}, {"template", Template()}};
  if (!restart_policy.empty()) t["restartPolicy"] = restart_policy;
  return t;
}

inline Json JobJson(const std::string& name, Json tasks, Json run_policy = Json::object()) {
  Json spec = {{"tasks", std::move(tasks)}};
  if (!run_policy.empty()) spec["runPolicy"] = std::move(run_policy);
  return {{"apiVersion", "sedna.io/v1alpha1"},
          {"kind", "DistributedJob"},
          {"metadata", {{"name", name}, {"namespace", "ns"}}},
          {"spec", std::move(spec)}};
}

class Harness {
 public:
  static constexpr const char* kNs = "ns";

  Harness()
      : pods_(&client, kube::resources::Pods(), {}, Clock::Real()),
        services_(&client, kube::resources::Services(), {}, Clock::Real()),
        children_(pods_.GetLister(), services_.GetLister()),
        expectations(&clock),
        gang(&client, &clock, absl::ZeroDuration()),
        queue_("job-test", &null_),
        engine(&client, &children_, &expectations, &gang, nullptr, &clock) {
    pods_.AddEventHandler(ObservingOwnerHandler(&queue_, "DistributedJob", &expectations));
    services_.AddEventHandler(ObservingOwnerHandler(&queue_, "DistributedJob", &expectations));
    pods_.Start();
    services_.Start();
    REQUIRE(kube::WaitForCacheSync({&pods_, &services_}, absl::Now() + absl::Seconds(10)));
  }
  ~Harness() {
    pods_.Stop();
    services_.Stop();
  }

  Json Create(const Json& job) {
    auto created = client.Create(DistributedJobs(), kNs, job);
    REQUIRE(created.ok());
    return *created;
  }
  Json Get(const std::string& name) {
    auto job = client.Get(DistributedJobs(), kNs, name);
    REQUIRE(job.ok());
    return *job;
  }
  bool Exists(const std::string& name) { return client.Get(DistributedJobs(), kNs, name).ok(); }
  // Edits the job's spec with `edit` (an Update, as kubectl edit would).
  void EditSpec(const std::string& name, const std::function<void(Json& spec)>& edit) {
    Json job = Get(name);
    edit(job["spec"]);
    REQUIRE(client.Update(DistributedJobs(), job).ok());
  }

  // Waits until the pod and Service caches hold exactly what the fake API server holds.
  void Sync() {
    bool synced = fakes::Eventually([&] {
      return Same(kube::resources::Pods(), pods_) && Same(kube::resources::Services(), services_);
    });
    REQUIRE(synced);
  }

  // One reconcile of `name`, writing the status when it changed (as the controller does).
  JobResult Reconcile(const std::string& name) {
    Sync();
    // Handlers run after the cache is updated: wait until they observed what was expected too.
    const std::string key = kube::MakeKey(kNs, name);
    REQUIRE(fakes::Eventually([&] {
      return expectations.Pending(key) == std::pair<int, int>{0, 0};
    }));
    Json object = Get(name);
    auto job = DistributedJob::FromJson(object);
    REQUIRE(job.ok());
    JobRequest request;
    request.object = &object;
    request.resource = &DistributedJobs();
    request.spec = job->spec;
    request.status = job->status;
    request.labels = {{"extra-label", "x"}};
    if (customize) customize(request);
    auto result = engine.Reconcile(request);
    REQUIRE(result.ok());
    if (result->status_changed) {
      REQUIRE(
          WriteJobStatus(&client, DistributedJobs(), object, result->status.ToJson(), &expectations)
              .ok());
    }
    Sync();
    return *result;
  }

  JobStatus Status(const std::string& name) {
    auto job = DistributedJob::FromJson(Get(name));
    REQUIRE(job.ok());
    return job->status;
  }

  std::map<std::string, Json> Pods() { return ByName(kube::resources::Pods()); }
  std::map<std::string, Json> Services() { return ByName(kube::resources::Services()); }
  std::vector<std::string> PodNames() {
    std::vector<std::string> out;
    for (const auto& [name, pod] : Pods()) out.push_back(name);
    return out;
  }

  // Writes the pod's status through the status subresource (what a kubelet does).
  void SetPodStatus(const std::string& pod, const Json& status) {
    auto patched = client.Patch(kube::resources::Pods(), kNs, pod, kube::PatchType::kMerge,
                                {{"status", status}}, "status");
    REQUIRE(patched.ok());
  }
  void SetPhase(const std::string& pod, const std::string& phase) {
    SetPodStatus(pod, {{"phase", phase}});
  }
  void SetAllPhases(const std::string& phase) {
    for (const auto& [name, pod] : Pods()) SetPhase(name, phase);
  }
  // A Failed pod whose first container exited with `exit_code`.
  void FailPod(const std::string& pod, int exit_code) {
    SetPodStatus(pod, {{"phase", "Failed"},
                       {"containerStatuses",
                        Json::array({{{"name", "main"},
                                      {"restartCount", 0},
                                      {"state", {{"terminated", {{"exitCode", exit_code}}}}}}})}});
  }
  void SetRestartCount(const std::string& pod, int restarts) {
    SetPodStatus(pod, {{"phase", "Running"},
                       {"containerStatuses",
                        Json::array({{{"name", "main"}, {"restartCount", restarts}}})}});
  }
  void DeletePod(const std::string& pod) {
    REQUIRE(client.Delete(kube::resources::Pods(), kNs, pod).ok());
  }

  fakes::FakeKubeClient client{Clock::Real()};
  FakeClock clock;

 private:
  bool Same(const kube::Resource& resource, const kube::SharedInformer& informer) {
    std::map<std::string, std::string> server;
    for (const Json& obj : client.Objects(resource))
      server[kube::Key(obj)] = kube::ResourceVersion(obj);
    std::map<std::string, std::string> cache;
    for (const kube::ObjectPtr& obj : informer.GetLister().List()) {
      cache[kube::Key(*obj)] = kube::ResourceVersion(*obj);
    }
    return server == cache;
  }
  std::map<std::string, Json> ByName(const kube::Resource& resource) {
    std::map<std::string, Json> out;
    for (Json& obj : client.Objects(resource)) {
      std::string name = kube::Name(obj);
      out[name] = std::move(obj);
    }
    return out;
  }

  kube::SharedInformer pods_;
  kube::SharedInformer services_;
  CacheChildLister children_;

 public:
  Expectations expectations;
  GangAvailability gang;

 private:
  NullReconciler null_;
  kube::Controller queue_;

 public:
  JobReconciler engine;
  std::function<void(JobRequest&)> customize;
};

}  // namespace nereid::job::testing
