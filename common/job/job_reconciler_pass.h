#pragma once

// The state of one JobReconciler::Reconcile call. Private to the library: included by
// job_reconciler.cc (the pass) and job_gang_sync.cc (its gang-scheduling step) only.

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "common/job/conditions.h"
#include "common/job/job_reconciler.h"
#include "common/job/pod_failure.h"

namespace nereid::job {

// Conditions carry whole seconds (metav1.Time): a pass reasons with the time it will write.
inline absl::Time TruncateToSecond(absl::Time t) {
  return absl::FromUnixSeconds(absl::ToUnixSeconds(t));
}

// One Reconcile call.
class JobReconciler::Pass {
 public:
  Pass(JobReconciler* r, const JobRequest& req)
      : r_(r),
        req_(req),
        spec_(req.spec),
        id_(JobIdentity::FromObject(*req.object, *req.resource)),
        key_(id_.Key()),
        now_exact_(r->clock_->Now()),
        now_(TruncateToSecond(now_exact_)),
        st_(req.status) {}

  absl::StatusOr<JobResult> Run();

 private:
  struct Retry {
    kube::ObjectPtr pod;
    std::string task;
    int index;
    PodFailure failure;
  };

  void Event(kube::EventType type, std::string_view reason, std::string_view message) {
    if (r_->recorder_ != nullptr) r_->recorder_->Record(*req_.object, type, reason, message);
  }
  // Sets a condition; returns whether it changed.
  bool Condition(std::string_view type, std::string_view status, std::string_view reason,
                 std::string_view message) {
    return SetCondition(&st_, type, status, reason, message, now_);
  }
  void FailJob(std::string_view reason, const std::string& message);
  void NoteError(const absl::Status& s) {
    if (!s.ok() && result_.sync_error.ok()) result_.sync_error = s;
  }

  absl::Status DeletePod(const kube::Json& pod);
  absl::Status DeleteService(const kube::Json& svc);
  void DeletePodGroup();
  void CreatePod(const Task& task, int index, bool gang);
  void EnsureService();

  void Suspend();
  void SyncTasks();
  // Returns false when pods must wait for the gang (or on error).
  bool SyncGang(bool* gang_enabled);
  void CleanupFinished();
  void ComputeCounts();
  absl::StatusOr<JobResult> Finish();

  JobReconciler* const r_;
  const JobRequest& req_;
  const JobSpec& spec_;
  const JobIdentity id_;
  const std::string key_;
  const absl::Time now_exact_;
  const absl::Time now_;
  JobStatus st_;
  JobResult result_;

  std::vector<kube::ObjectPtr> pods_;
  std::vector<kube::ObjectPtr> services_;
  std::set<std::string> deleted_;     // Pods deleted in this pass (names).
  std::vector<std::string> created_;  // Pods created in this pass: (task) for the histogram.
  std::map<std::string, int32_t> new_recreates_;
  bool replacing_ = false;     // A pod JobRequest::replacing holds for is terminating.
  bool finished_now_ = false;  // The job became Succeeded/Failed in this pass.
  bool gang_delay_ = false;
  bool gang_unavailable_ = false;
};

}  // namespace nereid::job
