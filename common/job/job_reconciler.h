#pragma once

// JobReconciler: the one reconcile every job controller runs. The caller —
// a kind's kube::Reconciler — reads its object from the cache, turns it into a JobRequest (the
// object, its RunPolicy and tasks, its current JobStatus, extra labels and a pod decorator), calls
// Reconcile(), writes JobResult::status if it changed (job::PutJobStatusFields inside its status
// write, for kinds whose status is a JobStatus) and returns JobResult::requeue_after to the
// workqueue.
//
// Order, every step idempotent and driven by the caches (level-based):
//   1. being deleted → nothing; expectations (and the status fence) unsatisfied → wait;
//   2. the job's pods and Services (by controller ownerReference);
//   3. Created condition; spec problems → Failed/InvalidSpec;
//   4. finished → cleanPodPolicy, PodGroup deleted, TTL: delete the job or requeue at the expiry;
//   5. suspended → delete pods, Service and PodGroup; Running=False, Suspended=True;
//   6. resumed → Suspended=False, startTime = now (the deadline restarts);
//   7. activeDeadlineSeconds passed → Failed/DeadlineExceeded; failed pods → Failed/TaskFailed
//      (permanent failure) or a retry each; retries beyond backoffLimit → Failed/
//      BackoffLimitExceeded;
//   8. gang: PodGroup created/updated, pods wait until Volcano admits it (or the
//      GangSchedulingUnavailable condition when PodGroups are not served);
//   9. headless Service; one pod per (task, index); surplus pods deleted; failed pods deleted for
//      retry (recreated once the deletion is observed), each counted in recreated/restarts;
//  10. counts, success rule, Running, phase; lastReconcileTime when anything changed;
//  11. requeue_after = the nearest timer (deadline, TTL, gang admission poll, expectations expiry).
// Decisions where upstream is wrong or vague are listed in common/job/README.md.

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/job/child_lister.h"
#include "common/job/expectations.h"
#include "common/job/gang.h"
#include "common/job/job_spec.h"
#include "common/job/job_status.h"
#include "common/job/job_status_writer.h"
#include "common/job/pod_builder.h"
#include "common/kube/client.h"
#include "common/kube/errors.h"
#include "common/kube/event_recorder.h"
#include "common/kube/resource.h"
#include "common/time/clock.h"

namespace nereid::job {

// Decides success from the per-task counts of the current reconcile. Must not be called for a
// finished job. Default: AllTasksSucceeded.
using SuccessRule =
    std::function<bool(const JobSpec& spec, const std::map<std::string, ReplicaStatus>& counts)>;
// Every replica of every task succeeded (tasks with 0 replicas are ignored; a job with no replicas
// at all never succeeds).
SuccessRule AllTasksSucceeded();
// Every replica of `task` succeeded (e.g. "the learner decides"; DI-style collectors that never
// exit are then cleaned up by cleanPodPolicy).
SuccessRule TaskSucceeded(std::string task);

// Last word on a pod before it is created: add env, volumes, labels, a nodeName... `pod` already
// has everything pod_builder.h lists.
using PodDecorator =
    std::function<void(const JobIdentity& job, const PodPlace& place, kube::Json* pod)>;

// Whether a terminating pod is one the controller deleted on purpose to replace it (e.g. built
// from an older spec), as opposed to one that failed or was deleted by someone else.
using PodPredicate = std::function<bool(const kube::Json& pod)>;

struct JobRequest {
  const kube::Json* object = nullptr;  // The job as the cache has it (metadata, resourceVersion).
  const kube::Resource* resource = nullptr;  // Its resource: ownerReferences and TTL deletion.
  JobSpec spec;
  JobStatus status;  // As read from object.status.
  // Kind-specific problems found by the caller (they join ValidateJobSpec's).
  std::vector<kube::StatusCause> invalid;
  std::map<std::string, std::string> labels;  // Added to every pod and the Service.
  PodDecorator decorate_pod;                  // Optional.
  SuccessRule success_rule;                   // Optional: AllTasksSucceeded.
  // Optional: where this pass lists the job's children instead of the reconciler's lister (a
  // kind that runs the library over a subset of its pods, e.g. one stage run).
  const ChildLister* children = nullptr;
  // Optional. A terminating pod it holds for counts neither as failed nor as active, and while
  // one is on its way out the job is Restarting (JobRestarting), not Running=False
  // (PodsNotRunning): its slot is being refilled on purpose.
  PodPredicate replacing;
};

struct JobResult {
  JobStatus status;
  bool status_changed = false;
  // When to look at the job again even if nothing changes (zero: no timer).
  absl::Duration requeue_after = absl::ZeroDuration();
  bool skipped = false;      // Expectations not satisfied (or being deleted): nothing was done.
  bool job_deleted = false;  // The TTL expired and the job was deleted.
  // First error of a child create/delete: the status is still worth writing, then return this so
  // the key is retried with backoff.
  absl::Status sync_error;
};

struct JobReconcilerOptions {
  // How often a job whose pods wait for Volcano to admit the PodGroup is looked at again.
  absl::Duration gang_poll_interval = absl::Seconds(5);
  // How often a job whose schedulingPolicy cannot be honoured (no PodGroups served) checks again,
  // so installing Volcano later reaches running jobs without an unrelated event.
  absl::Duration gang_recheck_interval = absl::Seconds(30);
};

class JobReconciler {
 public:
  // `recorder` and `gang` may be null (no events; gang scheduling reported unavailable).
  JobReconciler(kube::KubeClient* client, const ChildLister* children, Expectations* expectations,
                GangAvailability* gang, kube::EventRecorder* recorder, Clock* clock,
                JobReconcilerOptions options = {});

  absl::StatusOr<JobResult> Reconcile(const JobRequest& request);

 private:
  class Pass;  // The state of one Reconcile call.

  kube::KubeClient* const client_;
  const ChildLister* const children_;
  Expectations* const expectations_;
  GangAvailability* const gang_;
  kube::EventRecorder* const recorder_;
  Clock* const clock_;
  const JobReconcilerOptions options_;
};

}  // namespace nereid::job
