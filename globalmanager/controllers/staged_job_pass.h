#pragma once

// The private parts of StagedJobController's reconcile: the stage-run pod filter the common job
// library is given, and one reconcile pass. Included by the controller's .cc files only.

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "common/job/child_lister.h"
#include "common/job/job_spec.h"
#include "globalmanager/controllers/s3_credentials.h"
#include "globalmanager/controllers/stage_machine.h"
#include "globalmanager/controllers/staged_job_controller.h"
#include "globalmanager/controllers/staged_job_status.h"
#include "globalmanager/controllers/worker_template.h"

namespace nereid::gm {

// The pods of one stage run, for the common job library (which treats every pod it is shown as
// its own): the job's pods of `task` labelled with `run`.
class StageRunPods final : public job::ChildLister {
 public:
  StageRunPods(const job::ChildLister* all, std::string task, std::string run)
      : all_(all), task_(std::move(task)), run_(std::move(run)) {}

  std::vector<kube::ObjectPtr> Pods(const job::JobIdentity& id) const override;
  std::vector<kube::ObjectPtr> Services(const job::JobIdentity& id) const override {
    return all_->Services(id);
  }

 private:
  const job::ChildLister* const all_;
  const std::string task_;
  const std::string run_;
};

// One reconcile of a runnable job (staged_job_controller.h, steps 2-7).
class StagedJobController::Pass {
 public:
  Pass(StagedJobController* c, std::string key, kube::ObjectPtr object, StagedJob job,
       StagedRefs refs);

  absl::StatusOr<kube::ReconcileResult> Run();

 private:
  const api::Condition* Latest() const {
    return conditions_.empty() ? nullptr : &conditions_.back();
  }
  void Event(kube::EventType type, std::string_view reason, std::string_view message);
  void Timer(absl::Duration d) {
    if (d <= absl::ZeroDuration()) d = absl::Milliseconds(1);
    if (requeue_ == absl::ZeroDuration() || d < requeue_) requeue_ = d;
  }
  void NoteError(const absl::Status& s) {
    if (!s.ok() && error_.ok()) error_ = s;
  }
  absl::Status DeletePod(const kube::Json& pod, std::string_view why);

  // The S3 part of a pod with `params` whose s3:// URLs use Secret `secret` (read only when the
  // pod has one). nullopt while the Secret cannot be read: the problem goes to the status
  // (SpecValid=False with its reason, an Event) and the job is looked at again later, with
  // nothing failed; a transient API error is returned.
  absl::StatusOr<std::optional<WorkerS3Options>> StorageOf(const WorkerParams& params,
                                                           std::string_view secret);
  absl::Status RunStage();
  void ObserveInference();
  void Transitions();
  absl::Status SyncInference();
  void CleanupStagePods();
  absl::Status WriteStatus();
  absl::Status PlaceOnEdge();

  StagedJobController* const c_;
  const std::string key_;
  const kube::ObjectPtr object_;
  const StagedJob job_;
  const StagedRefs refs_;
  const WorkerOwner owner_;
  const job::JobIdentity id_;
  const absl::Time now_;

  kube::Json status_;
  std::vector<api::Condition> conditions_;
  std::vector<api::Condition> started_from_;  // The history this pass decided from.
  staged_status::StageRun run_;
  int64_t model_updates_ = 0;
  int64_t rounds_ = 0;
  std::map<std::string, std::string> stage_nodes_;
  std::vector<api::Condition> appended_;  // For Events once written.
  // A Secret a pod needs that cannot be read (StorageOf): the job waits on it.
  std::optional<CredentialProblem> credentials_;

  std::vector<kube::ObjectPtr> pods_;
  stages::Facts facts_;
  // The inference pods to keep / whether a new one must be created.
  std::vector<kube::ObjectPtr> inference_keep_;
  std::vector<kube::ObjectPtr> inference_drop_;
  std::optional<kube::Json> inference_pod_;  // desired template, when the worker should run
  std::string inference_hash_;

  absl::Duration requeue_ = absl::ZeroDuration();
  absl::Status error_;
  bool run_changed_ = false;
  bool stale_ = false;  // The status write lost to a newer object.
};

}  // namespace nereid::gm
