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

// What the controller knows about a job's placement after a reconcile.
struct JobPlacementView {
  job::JobIdentity job;
  const kube::Json* object = nullptr;   // The job as cached (metadata.generation, .spec).
  const job::JobSpec* spec = nullptr;   // Parsed spec (tasks with their pod templates).
  bool finished = false;                // Succeeded or Failed.
  std::vector<PlacedTaskPod> pods;      // The job's pods that have a node, not being deleted.
};

// Edge placement hook: the GM implements it (distributed_job_edge.h) to announce a job to the
// LocalControllers of its nodes so they relay its workers' reports. Called after every reconcile
// that looked at the job's pods (level-based, idempotent: compare with what was announced
// before), and for every cached job by DistributedJobController::AnnounceAll. Must not block.
class JobPlacementSink {
 public:
  virtual ~JobPlacementSink() = default;
  // Default: PodsPlaced(view.job, view.pods).
  virtual void JobPlaced(const JobPlacementView& view) { PodsPlaced(view.job, view.pods); }
  virtual void PodsPlaced(const job::JobIdentity& job, const std::vector<PlacedTaskPod>& pods) {}
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

  // Hands every cached, parsable job that is not being deleted to the placement sink (the GM's
  // PrimeEdge: the edge registry must be complete before the hub removes anything from a node).
  // Returns how many jobs were announced.
  int AnnounceAll();

 private:
  // The library's status keys of `object` through WriteLibraryJobStatus; a job gone meanwhile is
  // not an error.
  absl::Status WriteJobStatus(const kube::ObjectPtr& object, const job::JobStatus& status);
  // A job whose JSON does not even parse: Failed/InvalidSpec with the type errors, as the library
  // fails a job whose spec it refuses (an invalid DistributedJob is finished, not waiting for an
  // edit: the library's contract, not SpecValid=False).
  absl::Status FailUnparsable(const kube::ObjectPtr& cached, const absl::Status& error);
  void ReportPlacement(const job::JobIdentity& id, const kube::Json& object,
                       const job::JobSpec& spec, bool finished);

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
  // See DistributedJobController::AnnounceAll (informers must have synced).
  int AnnounceAll() { return reconciler_->AnnounceAll(); }
  // Looks at the job `key` ("ns/name") again (e.g. a node's labels changed its placement).
  void Enqueue(const std::string& key) { controller_->Enqueue(key); }
  const kube::Lister& jobs() const { return jobs_lister_; }

 private:
  kube::SharedInformer* jobs_;
  kube::SharedInformer* pods_;
  kube::SharedInformer* services_;
  kube::Lister jobs_lister_;
  job::CacheChildLister children_;
  job::Expectations expectations_;
  job::GangAvailability gang_;
  std::unique_ptr<DistributedJobController> reconciler_;
  std::unique_ptr<kube::Controller> controller_;
};

}  // namespace nereid::gm
