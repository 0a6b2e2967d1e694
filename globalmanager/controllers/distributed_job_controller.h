#pragma once

// DistributedJobController: the kube::Reconciler of sedna.io/v1alpha1 DistributedJob. It is the
// common job library (common/job) with no special cases: parse the object, hand its RunPolicy and
// tasks to job::JobReconciler, write the JobStatus back when it changed, requeue at the nearest
// timer. Pods carry Sedna's labels too ("distributedjob.sedna.io/name|uid|worker-type" with the
// task type as worker type) and Sedna's worker env (NAMESPACE, JOB_NAME, WORKER_NAME = pod name,
// LC_SERVER), so Sedna SDK workers can report to their node's LocalController.
//
// Wiring (the GM daemon): DistributedJobRunner below builds and owns all of it; by hand it is
//   jobs/pods/services informers → job::CacheChildLister, job::Expectations, job::GangAvailability
//   → DistributedJobController → kube::Controller + RegisterDistributedJobHandlers → Start.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/job/child_lister.h"
#include "common/job/expectations.h"
#include "common/job/gang.h"
#include "common/job/job_reconciler.h"
#include "common/kube/client.h"
#include "common/kube/controller.h"
#include "common/kube/event_recorder.h"
#include "common/kube/lister.h"
#include "common/kube/shared_informer.h"
#include "common/kube/shared_informer_factory.h"
#include "common/time/clock.h"

namespace nereid::gm {

// A pod of a job that has a node: pinned by its template (spec.nodeName) or scheduled.
struct PlacedTaskPod {
  std::string pod;
  std::string task;
  std::string task_type;
  int index = 0;
  std::string node;

  friend bool operator==(const PlacedTaskPod&, const PlacedTaskPod&) = default;
};

// Edge placement hook: the GM daemon implements it to announce a job's pods to the
// LocalControllers of their nodes (and to route those workers' reports back). Called after every
// reconcile that looked at the job's pods, with all of them (level-based, idempotent: compare with
// what was announced before). Must not block.
class JobPlacementSink {
 public:
  virtual ~JobPlacementSink() = default;
  virtual void PodsPlaced(const job::JobIdentity& job, const std::vector<PlacedTaskPod>& pods) = 0;
  // The job is gone: forget what was announced for it.
  virtual void JobRemoved(const std::string& kind, const std::string& key) = 0;
};

struct DistributedJobControllerDeps {
  kube::KubeClient* client = nullptr;
  kube::Lister jobs{nullptr, kube::Resource{}};  // distributedjobs.sedna.io (required)
  const job::ChildLister* children = nullptr;    // pods and Services
  job::Expectations* expectations = nullptr;
  job::GangAvailability* gang = nullptr;    // null: gang scheduling reported unavailable
  kube::EventRecorder* recorder = nullptr;  // null: no Events
  Clock* clock = nullptr;
  JobPlacementSink* placement = nullptr;            // null: no edge announcements
  std::string lc_server = "http://localhost:9100";  // LC_SERVER for Sedna SDK workers
  job::JobReconcilerOptions options;
};

class DistributedJobController final : public kube::Reconciler {
 public:
  explicit DistributedJobController(DistributedJobControllerDeps deps);

  absl::StatusOr<kube::ReconcileResult> Reconcile(const std::string& key) override;

 private:
  // A job whose JSON does not even parse: Failed/InvalidSpec with the type errors.
  absl::Status FailUnparsable(const kube::Json& object, const absl::Status& error);
  void ReportPlacement(const job::JobIdentity& id);

  DistributedJobControllerDeps deps_;
  job::JobReconciler engine_;
};

// Job events enqueue the job; pod and Service events observe expectations and enqueue the owner.
void RegisterDistributedJobHandlers(kube::Controller* controller, kube::SharedInformer* jobs,
                                    kube::SharedInformer* pods, kube::SharedInformer* services,
                                    job::Expectations* expectations);

// The whole DistributedJob controller built from the daemon's shared pieces (informers come from
// `factory`, so pods/Services informers are shared with other controllers):
//   DistributedJobRunner runner(client, &factory, recorder, clock, {.ns = ns});
//   factory.Start();  RETURN_IF_ERROR(runner.Start());  ...  runner.Stop();
class DistributedJobRunner {
 public:
  struct Options {
    std::string ns;  // "" = all namespaces.
    int workers = 2;
    std::string lc_server = "http://localhost:9100";
    JobPlacementSink* placement = nullptr;
    job::JobReconcilerOptions reconcile;
  };

  DistributedJobRunner(kube::KubeClient* client, kube::SharedInformerFactory* factory,
                       kube::EventRecorder* recorder, Clock* clock, Options options);
  ~DistributedJobRunner();

  std::vector<kube::SharedInformer*> informers() const { return {jobs_, pods_, services_}; }
  // Waits for the informers to sync (the factory must be started), then starts the workers.
  absl::Status Start();
  void Stop();
  kube::Controller::Stats GetStats() const { return controller_->GetStats(); }
  job::Expectations* expectations() { return &expectations_; }

 private:
  kube::SharedInformer* jobs_;
  kube::SharedInformer* pods_;
  kube::SharedInformer* services_;
  job::CacheChildLister children_;
  job::Expectations expectations_;
  job::GangAvailability gang_;
  std::unique_ptr<DistributedJobController> reconciler_;
  std::unique_ptr<kube::Controller> controller_;
};

}  // namespace nereid::gm
