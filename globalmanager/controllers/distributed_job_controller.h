#pragma once

// DistributedJobController: sedna.io/v1alpha1 DistributedJob, the common job library (common/job)
// as a kind with no special cases: parse the object, hand its RunPolicy and tasks to the engine,
// write the JobStatus back when it changed, requeue at the nearest timer. Pods carry Sedna's labels
// too ("distributedjob.sedna.io/name|uid|worker-type" with the task type as worker type) and
// Sedna's worker env (NAMESPACE, JOB_NAME, WORKER_NAME = pod name, LC_SERVER), so Sedna SDK
// workers can report to their node's LocalController. A LibraryJobController like every kind on
// the library: the same runner, reconcile metrics and Events.
//
// With an edge hub (context.edge set) and no other placement sink, the job's edge half is wired
// too (distributed_job_edge.h): a Node informer, the JobPlacementSink announcing each job to its
// edge nodes' LCs (PrimeEdge puts every job into the registry before the hub may remove
// anything), and the ReportSink for kind "DistributedJob" registered with context.reports (worker
// reports → status.workerReports).

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/job/job_reconciler.h"
#include "common/job/job_status.h"
#include "globalmanager/controllers/controller_context.h"
#include "globalmanager/controllers/gm_controller.h"
#include "globalmanager/controllers/library_job_controller.h"

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
// before), and for every cached job by DistributedJobController::PrimeEdge. Must not block.
class JobPlacementSink {
 public:
  virtual ~JobPlacementSink() = default;
  // Default: PodsPlaced(view.job, view.pods).
  virtual void JobPlaced(const JobPlacementView& view) { PodsPlaced(view.job, view.pods); }
  virtual void PodsPlaced(const job::JobIdentity& job, const std::vector<PlacedTaskPod>& pods) {}
  // The job is gone: forget what was announced for it.
  virtual void JobRemoved(const std::string& kind, const std::string& key) = 0;
};

class DistributedJobEdge;

struct DistributedJobOptions {
  // Where placements go; null: a DistributedJobEdge when the context has an edge dispatcher,
  // else nowhere.
  JobPlacementSink* placement = nullptr;
  LibraryJobOptions library;
};

class DistributedJobController final : public LibraryJobController {
 public:
  static absl::StatusOr<std::unique_ptr<DistributedJobController>> Create(
      const ControllerContext& context, DistributedJobOptions options = {});
  ~DistributedJobController() override;

  // Hands every cached, parsable job that is not being deleted to the placement sink: the edge
  // registry must be complete before the hub removes anything from a node.
  absl::Status PrimeEdge() override;

 private:
  DistributedJobController(const ControllerContext& context, DistributedJobOptions options);

  absl::StatusOr<kube::ReconcileResult> Reconcile(const std::string& key) override;
  // The library's status keys of `object`; a job gone meanwhile is not an error.
  absl::Status WriteStatusFields(const kube::ObjectPtr& object, const job::JobStatus& status);
  // A job whose JSON does not even parse: Failed/InvalidSpec with the type errors, as the library
  // fails a job whose spec it refuses (an invalid DistributedJob is finished, not waiting for an
  // edit: the library's contract, not SpecValid=False).
  absl::Status FailUnparsable(const kube::ObjectPtr& cached, const absl::Status& error);
  void ReportPlacement(const job::JobIdentity& id, const kube::Json& object,
                       const job::JobSpec& spec, bool finished);

  kube::SharedInformer* nodes_ = nullptr;  // With the edge half only.
  // Declared before placement_, which may point to it.
  std::unique_ptr<DistributedJobEdge> edge_;
  JobPlacementSink* placement_ = nullptr;
};

// The DefaultRegistry() factory: null (the kind is skipped, with a warning) when the API server
// does not serve distributedjobs.sedna.io (a cluster with only Sedna's CRDs installed).
absl::StatusOr<std::unique_ptr<GmController>> MakeDistributedJobController(
    ControllerContext& context);

}  // namespace nereid::gm
