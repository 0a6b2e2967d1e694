#pragma once

// StagedJobController: the GM controller of IncrementalLearningJob and LifelongLearningJob (Sedna's
// controllers/incrementallearning and lifelonglearning, with their weaknesses fixed). One class,
// parameterized by a StagedKind (incremental_learning_controller.h,
// lifelong_learning_controller.h).
//
// The job never finishes: it loops Train -> Eval -> Deploy -> Train (stage_machine.h). The LC of
// the dataset's node evaluates the triggers and prepares each stage's data; this controller runs
// the stage pods and the inference worker, and keeps the status. Reconcile (level-triggered):
//
//  1. Spec: api parsing + validation, the worker templates (selector labels, storage URLs, node
//     selection), spec.runPolicy (Nereid, optional; ttlSecondsAfterFinished is refused: the job
//     never finishes). Invalid → status.jobConditions SpecValid=False reason InvalidSpec,
//     status.reason/message, a Warning Event (once per distinct problem), the job withdrawn from
//     the edge, no pod created, no retry (the user's edit re-reconciles). A missing Dataset or
//     Model is "waiting" (SpecValid=False, reason DatasetNotFound / ModelNotFound) and the job is
//     re-reconciled when it appears (Datasets and Models are watched, referrers found by index).
//  2. The stage run (Train/Eval in Starting/Running): one pod "<job>-<train|eval>-0" built from the
//     stage template with Sedna's env, labels and storage mounts (worker_template.h), through the
//     common job library: created with expectations, a failed pod retried up to
//     runPolicy.backoffLimit (default 6) with restartPolicy OnFailure unless the template sets one,
//     activeDeadlineSeconds per stage run, suspend, gang scheduling. The run's JobStatus is
//     status.stagePods (reset for each run, numbered by stagePods.run and the pods' label
//     nereid.io/stage-run). The library's headless Service "<job>" exists while the job does.
//     A pod with an s3:// URL (or an indirect index) needs the job's credentialName Secret; one
//     that cannot be read (CredentialsForbidden/NotFound/Invalid, s3_credentials.h) keeps the
//     stage Starting with no pod, SpecValid=False (jobConditions) and a Warning Event, and is
//     read again every kCredentialRecheckPeriod — the stage never fails for it.
//  3. Transitions (stage_machine.h) appended with api::AppendCondition (at most 10 kept);
//     stage/stageState/rounds summarize them; a Normal Event "<Stage><Type>" per transition
//     (Warning for Failed).
//  4. Cleanup: when a stage run ends, its pods are deleted per runPolicy.cleanPodPolicy — default
//     All here (Sedna left every completed pod behind); Running keeps Succeeded/Failed pods, None
//     keeps all — and any pod left from an earlier run of a stage is deleted before that stage
//     runs again (the names are reused).
//  5. The inference worker: a pod "<job>-inference-<rand>" from deploySpec.template (IL: from the
//     job's start with the deploy Model; LL: from its first deploy), hostNetwork, hard example
//     mining env, and with deploySpec.model.hotUpdateEnabled the hostPath
//     /var/lib/sedna/model-hot-update/<ns>/<lower kind>/<name> at /model-hot-update plus
//     MODEL_HOT_UPDATE, MODEL_POLL_PERIOD_SECONDS, MODEL_HOT_UPDATE_CONFIG. It carries the hash of
//     what it was built from (template, and without hot update the number of installed models), so
//     a spec edit or a deploy replaces it; a deleted or finished one is recreated. Its s3:// URLs
//     use the kind's InferenceCredential (IL: the deploy Model's credentialName, else the job's;
//     LL: the job's); while that Secret cannot be read no new inference pod is made (as above).
//  6. Nodes: each stage pod runs on its template's nodeName, else — unless the template selects
//     nodes itself (nodeSelector/affinity: the scheduler decides) — on the dataset's node (Sedna
//     #67: stages may run on different nodes). status.stageNodes records where each stage runs.
//     The job's spec (edge::v1 IncrementalLearningJobSpec / LifelongLearningJobSpec, with the stage
//     nodes and the current stage — including the previous stage's input/output while Waiting) goes
//     to the dataset's node and every stage node, version = generation + a hash of that spec; a
//     node no longer involved is told to drop it. IL Models are required (ModelRequirements): the
//     initial model on the dataset and train nodes, the deploy model on the dataset, eval and
//     deploy nodes, the eval initial model on the dataset and eval nodes.
//  7. Status through the status subresource (WriteStatus), only when changed, and only if the
//     latest condition is still the one this pass started from (else the pass is retried: a report
//     landed meanwhile); then the library's status fence.
//
// Upstream (ReportSink for the kind):
//   TriggerEvent from the dataset's node: Ready(S) with the stage input, Completed (deploy trigger
//     did not fire), Failed; from the deploy node: Installed (model copied / hot-update file
//     written) or Failed. Applied with stage_machine.h OnStageReport to the fresh latest condition;
//     a stale or repeated report is Accepted and ignored.
//   WorkerReport with results (train/eval workers): the output models join the data of the current
//     run's latest condition of that stage (the next stage needs them: Sedna #317); LL also
//     rebuilds status.knowledgeBase from them. The pod phases drive the transitions, not the
//     worker's status.
//   Object gone / re-created → Rejected ObjectGone; a trigger report from a node without that role
//   → Rejected NotThisNode; no trigger/worker payload → Rejected Invalid; API trouble → Retry.

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/job/job_reconciler.h"
#include "globalmanager/controllers/controller_context.h"
#include "globalmanager/controllers/edge_placements.h"
#include "globalmanager/controllers/library_job_controller.h"
#include "globalmanager/controllers/report_router.h"
#include "globalmanager/controllers/staged_job.h"

namespace nereid::gm {

struct StagedJobOptions {
  // How long Completed(Train|Eval) waits for the worker's output report before the next stage
  // starts without it.
  absl::Duration output_grace = absl::Seconds(60);
  job::JobReconcilerOptions job;
};

class StagedJobController final : public LibraryJobController, public ReportSink {
 public:
  // Registers for the kind's reports when context.reports is set.
  static absl::StatusOr<std::unique_ptr<StagedJobController>> Create(
      const ControllerContext& context, std::unique_ptr<StagedKind> kind,
      StagedJobOptions options = {});
  ~StagedJobController() override;

  absl::Status PrimeEdge() override;
  ReportOutcome HandleReport(std::string_view node, const edge::v1::StatusReport& report) override;

  // The nodes the job `key` is announced to (for tests and diagnostics).
  std::set<std::string> PlacedNodes(const std::string& key) const;
  const StagedKind& kind() const { return *kind_; }

 private:
  class Pass;

  StagedJobController(const ControllerContext& context, std::unique_ptr<StagedKind> kind,
                      StagedJobOptions options);

  absl::StatusOr<kube::ReconcileResult> Reconcile(const std::string& key) override;

  // Parses and checks the spec (problems in `causes`).
  StagedJob ParseAndCheck(const kube::Json& object, std::vector<kube::StatusCause>* causes) const;
  // Resolves the Dataset and Models; false with `reason`/`message` when one is missing.
  bool Resolve(const StagedJob& job, StagedRefs* refs, std::string* reason,
               std::string* message) const;
  void RequireModels(const std::string& key, const StagedJob& job, const StagedRefs& refs,
                     const kube::Json& status);
  // Edge resources per node for a job with `status`.
  std::map<std::string, edge::v1::Resource> EdgeResources(const kube::Json& object,
                                                          const StagedJob& job,
                                                          const StagedRefs& refs,
                                                          const kube::Json& status) const;
  // The job cannot run: SpecValid=False with `reason`, an Event when news; withdraws it.
  absl::Status RecordNotRunnable(const std::string& key, const kube::ObjectPtr& object,
                                 std::string_view reason, const std::string& message);
  absl::Status Forget(const std::string& key);
  void EnqueueReferrers(const std::string& index, const kube::ObjectPtr& object);

  ReportOutcome HandleTrigger(std::string_view node, const edge::v1::StatusReport& report,
                              const kube::ObjectPtr& cached);
  ReportOutcome HandleWorker(std::string_view node, const edge::v1::StatusReport& report,
                             const kube::ObjectPtr& cached);

  std::string Requester(const std::string& key) const;

  const std::unique_ptr<StagedKind> kind_;
  const StagedJobOptions options_;
  kube::SharedInformer* datasets_ = nullptr;
  kube::SharedInformer* models_ = nullptr;
  EdgePlacements placements_;
};

}  // namespace nereid::gm
