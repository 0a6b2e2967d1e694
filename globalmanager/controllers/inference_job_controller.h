#pragma once

// InferenceJobController: Sedna's multi-edge inference jobs on the common job library, one
// instance per kind — VideoAnalyticsJob (video_analytics_controller.h) and ReidJob
// (reid_job_controller.h) — each kind contributing its InferenceJobKind (names, port, how its spec
// is read). Sedna runs one pod per job and ignores its JobSpec; here the JobSpec is honoured.
//
// Reconcile (level-triggered from the informer caches):
//   1. The kind's plan: the typed object (common/api) parsed and validated. Invalid (including
//      restartPolicy Always, which could never finish) → SpecValid=False + Warning Event
//      InvalidSpec, nothing created, no retry; pods of an earlier valid spec are left alone.
//   2. The Model (VideoAnalyticsJob, model_resolver.h): missing → SpecValid=False/ModelNotFound,
//      phase Pending and a Warning Event ModelNotFound when this is news; nothing is created.
//      Models are watched, so the job proceeds as soon as its Model appears. Its url becomes
//      MODEL_URL (a host path is mounted; an s3:// one is fetched by the storage-initializer with
//      the Model's credentialName Secret by secretKeyRef, worker_template.h). A Secret that cannot be read →
//      SpecValid=False with its reason (CredentialsNotFound/Forbidden/Invalid/Unavailable) + Event,
//      looked at again after kCredentialRecheckPeriod. A Model deleted after the job started
//      does not stop it: the job goes on with the worker built before, so its status keeps
//      following its pods.
//   3. The worker template (worker_template.h): Sedna's labels "<kind>.sedna.io/name|uid|
//      worker-type", env NAMESPACE, JOB_NAME, WORKER_NAME, LC_SERVER (+ MODEL_NAME, MODEL_URL for
//      VideoAnalyticsJob; KAFKA_ENABLED=true with kafkaSupport; a value the user sets wins).
//   4. Spec change: every pod carries the hash of the template it was built from
//      (nereid.io/template-hash); pods of an older template are deleted (Event SpecChanged) and
//      the library recreates them from the new one. A finished job stays finished.
//   5. The common job library: pods "<job>-<worker type>-<index>", `completions` of them, run at
//      once; a failed pod is retried — a new pod for restartPolicy Never (also when the template
//      sets none), containers restarted in place for OnFailure — up to backoffLimit (default 6),
//      then Failed/BackoffLimitExceeded; activeDeadlineSeconds → Failed/DeadlineExceeded;
//      ttlSecondsAfterFinished deletes the job; suspend deletes the pods and Services and resumes
//      later; Succeeded when every pod succeeded (common/job/README.md). A pod deleted from
//      outside is recreated. The library's headless Service "<job>" comes with it.
//   6. Sedna's Service "<job>-<worker type>" (ClusterIP, port kind.service_port named tcp-0,
//      selecting the worker labels) while the job runs: 4000 for VideoAnalyticsJob, and 5000 for
//      ReidJob, which Sedna's ReID workers expect and Sedna never creates. Recreated when deleted.
//   7. Edge: each node the template pins the worker to (nodeName; nodeSelector/required affinity
//      over edge nodes, placement.h) while the job runs, and each edge node a pod of the job is
//      bound to, gets an InferenceJobSpec (proto) naming the job's pods there, so its LC accepts
//      and relays the workers' reports; other nodes are told to drop it, and all of them when the
//      job is deleted. The Model is required on those nodes (ModelRequirements).
//   8. Status (inference_job_status.h) through the status subresource, written only when changed,
//      then the library's status fence.
//
// Upstream (ReportSink, every kind): the job's workers report through their node's LC. Job gone
// or re-created → Rejected ObjectGone; a node the job is not announced to → Rejected NotThisNode;
// not a worker report or no JSON object → Rejected Invalid. Then, for kinds with
// reports_to_metrics (VideoAnalyticsJob), the report's ownerInfo (minus startTime/updateTime)
// becomes status.metrics [{key, value}], the latest report's, at most api::kMaxInferenceJobMetrics
// entries, values cut at kMaxMetricValueBytes (API trouble → Retry); for the others (ReidJob,
// whose status schema has no metrics) the report is Accepted and nothing is written, so the LC
// drops it instead of holding a report no GM will ever take.

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/api/inference_job.h"
#include "common/api/model.h"
#include "common/job/job_reconciler.h"
#include "globalmanager/controllers/controller_context.h"
#include "globalmanager/controllers/edge_placements.h"
#include "globalmanager/controllers/library_job_controller.h"
#include "globalmanager/controllers/report_router.h"
#include "globalmanager/controllers/s3_credentials.h"

namespace nereid::gm {

// What the controller needs from a job's spec, whatever its kind.
struct InferenceJobPlan {
  api::InlineJobSpec job;
  bool kafka = false;
  std::string model_name;  // "" for kinds without a Model.
};

// What a kind contributes.
struct InferenceJobKind {
  std::string_view kind;         // "VideoAnalyticsJob"
  std::string_view name;         // Controller name (logs, metrics): "videoanalytics"
  const kube::Resource* resource = nullptr;
  std::string_view worker_type;  // Sedna's: "videoanalytics", "reid"
  int32_t service_port = 0;      // Sedna's Service "<job>-<worker type>"
  // Worker reports become status.metrics; otherwise they are accepted and not recorded.
  bool reports_to_metrics = false;
  // Parses and validates an object of the kind: its plan, or InvalidArgument with the causes
  // (kube::Causes).
  absl::StatusOr<InferenceJobPlan> (*plan)(const kube::Json& object) = nullptr;
};

inline constexpr size_t kMaxMetricValueBytes = 1024;

class InferenceJobController final : public LibraryJobController, public ReportSink {
 public:
  // Registers for the kind's reports when context.reports is set.
  static absl::StatusOr<std::unique_ptr<InferenceJobController>> Create(
      const ControllerContext& context, const InferenceJobKind& kind,
      job::JobReconcilerOptions options = {});
  ~InferenceJobController() override;

  absl::Status PrimeEdge() override;
  ReportOutcome HandleReport(std::string_view node, const edge::v1::StatusReport& report) override;

  // The nodes the job `key` is announced to (for tests and diagnostics).
  std::set<std::string> PlacedNodes(const std::string& key) const;

 private:
  // A plan turned into what the library builds pods from.
  struct Worker {
    kube::Json pod_template;
    bool pod_restart_never = false;
    std::string template_hash;
  };

  InferenceJobController(const ControllerContext& context, const InferenceJobKind& kind,
                         job::JobReconcilerOptions options);

  absl::StatusOr<kube::ReconcileResult> Reconcile(const std::string& key) override;
  // The worker template of `plan` (the Model's url already resolved into `model_url`, its
  // Secret into `s3`).
  absl::StatusOr<Worker> BuildWorker(const kube::Json& object, const InferenceJobPlan& plan,
                                     const std::string& model_url, WorkerS3Options s3) const;
  // The worker of `plan`: built with its Model's url, or — the Model gone after the job
  // `started` — the one built last for this uid and generation. NotFound (with the message) while
  // the job has to wait for its Model; `problem` set (and its status returned) while it has to
  // wait for the s3:// Model's Secret; InvalidArgument for a template that cannot be built.
  absl::StatusOr<Worker> WorkerFor(const std::string& key, const kube::Json& object,
                                   const InferenceJobPlan& plan, bool started,
                                   std::optional<CredentialProblem>* problem);
  // The Model (with a spec.url), or a message saying why the job has to wait for it.
  absl::StatusOr<api::Model> ModelOf(const std::string& ns, const std::string& model) const;
  // SpecValid=False with `reason` (ModelNotFound, or the Secret's problem), phase Pending, and a
  // Warning Event when this is news.
  absl::Status WaitForModel(const std::string& key, const kube::ObjectPtr& object,
                            std::string_view reason, const std::string& message);
  // Deletes the pods built from another template (the first delete error to `delete_error`).
  void RestartStalePods(const std::string& key, const kube::Json& object,
                        const std::vector<kube::ObjectPtr>& pods, const std::string& hash,
                        absl::Status* delete_error);
  // Announces the job to the nodes that need it and withdraws it from the others.
  absl::Status Place(const std::string& key, const kube::Json& object,
                     const InferenceJobPlan& plan, const kube::Json& pod_template,
                     const std::vector<kube::ObjectPtr>& pods, bool finished);
  // The job is gone: withdraw it everywhere, release its Model, forget its expectations.
  absl::Status Forget(const std::string& key);
  bool IsEdgeNode(const std::string& node) const;
  std::string Requester(const std::string& key) const;
  void EnqueueAll();

  const InferenceJobKind kind_;
  kube::SharedInformer* models_ = nullptr;
  kube::SharedInformer* nodes_ = nullptr;
  EdgePlacements placements_;

  // The worker last built for each job, for a job whose Model goes away after it started.
  struct BuiltWorker {
    std::string uid;
    int64_t generation = 0;
    Worker worker;
    bool model_gone_told = false;  // The Warning Event about its Model being gone was recorded.
  };
  absl::Mutex mu_;
  std::map<std::string, BuiltWorker> built_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nereid::gm
