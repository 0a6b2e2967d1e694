#pragma once

// FederatedLearningController: sedna.io FederatedLearningJob on the common job library
// (Sedna's controllers/federatedlearning, with its weaknesses fixed).
//
// Reconcile (level-triggered from the informer caches):
//   1. The plan (federated_learning_plan.h): tasks "aggregation" + one "train-..." per training pod
//      (a training template with a nodeSelector/affinity and no nodeName → one pod per matching
//      edge node, placement.h), built from the user's templates with Sedna's env, labels and
//      mounts. Invalid spec, bad node selection → SpecValid=False + Warning Event InvalidSpec; a
//      Dataset/Model that does not exist yet → the same with reason DatasetNotFound/ModelNotFound
//      (model_resolver.h); nothing created, no retry (a Dataset/Model appearing later, or an edit,
//      re-reconciles: Datasets and Models are watched and their referrers found through indexes).
//      Pods that already run are left alone while the spec is invalid.
//   2. Spec change: every pod carries the hash of the plan it was built from
//      (nereid.io/fl-spec-hash). When the plan changes — template, Dataset/Model URL, the set of
//      training nodes (so PARTICIPANTS_COUNT) — currentRound is cleared (written first, so a
//      failed write deletes nothing and is retried), then all pods of the job are deleted and,
//      once the caches saw every delete (expectations), recreated from the new plan (as Sedna: an
//      FL session cannot change its participants midway); Event SpecChanged. A change that does
//      not touch the pods (e.g. runPolicy) restarts nothing. A finished job stays finished
//      (delete and re-create it to run again).
//   3. The common job library (common/job/JobReconciler): pods "<job>-<task>-0" created with
//      expectations, a Failed pod deleted and recreated (restartPolicy OnFailure, Sedna's default)
//      up to runPolicy.backoffLimit retries (default 6, batch/v1's; every recreate and container
//      restart counts) then Failed/BackoffLimitExceeded with a Warning Event; restartPolicy Never
//      in a template fails the job on the first failure (TaskFailed); activeDeadlineSeconds,
//      ttlSecondsAfterFinished, suspend, gang scheduling as documented in common/job/README.md;
//      cleanPodPolicy default None (Sedna keeps every pod). A pod deleted from outside is
//      recreated. Success: every training pod succeeded (FlTrainingSucceeded).
//   4. Service "<job>-aggregation" (port 7363 → AGG_BIND_PORT, port name tcp-0, selecting the
//      aggregation worker) while the job runs; the library's headless Service "<job>" as well.
//   5. Edge: each node running a training pod (and the aggregation pod's node) gets a
//      FederatedLearningJobSpec with its own training workers; version = generation + a hash of
//      that node's spec. A node that no longer runs one is told to drop it; deletion removes it
//      everywhere. The pretrained Model (if any) is required on the training nodes.
//   6. Status (federated_learning_status.h) through the status subresource, written only when
//      changed, then the library's status fence.
//
// Upstream (ReportSink for "FederatedLearningJob"): a WorkerReport's ownerInfo.currentRound raises
// status.currentRound/roundUpdateTime (bounded; Sedna appended a condition per round); the first
// model's metrics in results become the aggregation Model's status.metrics (status subresource).
// Reports from a pod of an older spec, or older than the pod that now has the worker's name, are
// accepted and ignored. Job gone or re-created → Rejected ObjectGone; not a worker report →
// Rejected Invalid; API trouble → Retry.
//
// Where the reports come from: the edge hub accepts a node's report only about an object it sent
// to that node. Sedna's training workers (sedna.core.federated_learning) post currentRound and the
// round's model with its metrics to their own node's LC (LC_SERVER=localhost), and every training
// node holds the job (step 5), so round progress and Model metrics reach status from the training
// workers. The aggregation worker usually runs in the cloud, where no LC runs (the LC DaemonSet
// selects edge nodes): status never depends on its reports. When the aggregation pod is on a node
// (nodeName in its template, or once scheduled), that node is sent the job too (with no training
// workers), so an LC there is accepted. Pod phases (Running/Succeeded/Failed) come from the API
// server, not from reports.

#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/job/job_reconciler.h"
#include "globalmanager/controllers/controller_context.h"
#include "globalmanager/controllers/edge_placements.h"
#include "globalmanager/controllers/federated_learning_plan.h"
#include "globalmanager/controllers/gm_controller.h"
#include "globalmanager/controllers/library_job_controller.h"
#include "globalmanager/controllers/report_router.h"

namespace nereid::gm {

class FederatedLearningController final : public LibraryJobController, public ReportSink {
 public:
  // Registers for "FederatedLearningJob" reports when context.reports is set.
  static absl::StatusOr<std::unique_ptr<FederatedLearningController>> Create(
      const ControllerContext& context, job::JobReconcilerOptions options = {});
  ~FederatedLearningController() override;

  absl::Status PrimeEdge() override;
  ReportOutcome HandleReport(std::string_view node, const edge::v1::StatusReport& report) override;

  // The nodes the job `key` is announced to (for tests and diagnostics).
  std::set<std::string> PlacedNodes(const std::string& key) const;

 private:
  FederatedLearningController(const ControllerContext& context, job::JobReconcilerOptions options);

  absl::StatusOr<kube::ReconcileResult> Reconcile(const std::string& key) override;
  FlPlanInputs Inputs(const std::string& ns) const;
  // When a pod was built from another plan: resets the round progress in status (an error when
  // that write fails: nothing is deleted then), then deletes every pod of the job (the first
  // delete error goes to `delete_error`; the library recreates them from the new plan).
  absl::Status RestartStalePods(const std::string& key, const kube::ObjectPtr& object,
                                const std::vector<kube::ObjectPtr>& pods, const FlPlan& plan,
                                absl::Status* delete_error);
  // Sends the job to the nodes that need it and withdraws it from the others.
  absl::Status Place(const std::string& key, const kube::Json& job, const FlPlan& plan,
                     const std::vector<kube::ObjectPtr>& pods);
  // The job is gone: withdraw it everywhere, release its models, forget its expectations.
  absl::Status Forget(const std::string& key);
  bool IsStaleWorker(const std::string& key, const kube::Json& job,
                     const edge::v1::WorkerReport& worker) const;
  void EnqueueReferrers(const std::string& index, const kube::ObjectPtr& object);
  void EnqueueSelectorJobs();

  kube::SharedInformer* datasets_ = nullptr;
  kube::SharedInformer* models_ = nullptr;
  kube::SharedInformer* nodes_ = nullptr;

  mutable absl::Mutex mu_;
  // key → the current plan's spec hash, for telling reports of pods of an older plan.
  std::map<std::string, std::string> spec_hashes_ ABSL_GUARDED_BY(mu_);
  EdgePlacements placements_;
};

// The DefaultRegistry() factory: null (the kind is skipped, with a warning) when the API server
// does not serve federatedlearningjobs.sedna.io.
absl::StatusOr<std::unique_ptr<GmController>> MakeFederatedLearningController(
    ControllerContext& context);

}  // namespace nereid::gm
