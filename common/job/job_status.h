#pragma once

// The observed state every job kind shares: phase, typed conditions (one per type), per-task
// replica counts and pod-phase histograms, restarts and timestamps, with the JSON the CRD declares.
// The condition algebra (what setting one condition does to the others) is in conditions.h.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/api/common_types.h"
#include "common/api/json_fields.h"
#include "common/kube/object.h"

namespace nereid::job {

// Condition types.
namespace condition_types {
inline constexpr std::string_view kCreated = "Created";
inline constexpr std::string_view kRunning = "Running";
inline constexpr std::string_view kRestarting = "Restarting";
inline constexpr std::string_view kSucceeded = "Succeeded";
inline constexpr std::string_view kFailed = "Failed";
inline constexpr std::string_view kSuspended = "Suspended";
// True while spec.runPolicy.schedulingPolicy is set but the cluster does not serve
// scheduling.volcano.sh/v1beta1 PodGroups: pods are then created without gang scheduling.
inline constexpr std::string_view kGangSchedulingUnavailable = "GangSchedulingUnavailable";
}  // namespace condition_types

// Condition reasons (one vocabulary for every kind, unlike training-operator's "<Kind><Suffix>").
namespace reasons {
inline constexpr std::string_view kJobCreated = "JobCreated";
inline constexpr std::string_view kJobRunning = "JobRunning";
inline constexpr std::string_view kPodsNotRunning = "PodsNotRunning";
inline constexpr std::string_view kJobRestarting = "JobRestarting";
inline constexpr std::string_view kJobSucceeded = "JobSucceeded";
inline constexpr std::string_view kJobSuspended = "JobSuspended";
inline constexpr std::string_view kJobResumed = "JobResumed";
inline constexpr std::string_view kTaskFailed = "TaskFailed";
inline constexpr std::string_view kBackoffLimitExceeded = "BackoffLimitExceeded";
inline constexpr std::string_view kDeadlineExceeded = "DeadlineExceeded";
inline constexpr std::string_view kInvalidSpec = "InvalidSpec";
inline constexpr std::string_view kPodGroupNotServed = "PodGroupNotServed";
inline constexpr std::string_view kPodGroupServed = "PodGroupServed";
}  // namespace reasons

// status.phase: the headline of the conditions.
namespace phases {
inline constexpr std::string_view kPending = "Pending";  // Created; not (yet) enough pods running.
inline constexpr std::string_view kRunning = "Running";
inline constexpr std::string_view kRestarting = "Restarting";
inline constexpr std::string_view kSucceeded = "Succeeded";
inline constexpr std::string_view kFailed = "Failed";
inline constexpr std::string_view kSuspended = "Suspended";
}  // namespace phases

inline constexpr std::string_view kTrue = "True";
inline constexpr std::string_view kFalse = "False";

// Counts of one task's pods (training-operator's ReplicaStatus plus Nereid's restart counters).
struct ReplicaStatus {
  int32_t active = 0;     // Running and not being deleted.
  int32_t succeeded = 0;  // Phase Succeeded.
  int32_t failed = 0;     // Phase Failed, or Running while being deleted (lost node).
  // Failed pods this controller deleted so that they would be recreated (a retry each).
  int32_t recreated = 0;
  // Retries of this task: `recreated` plus the container restarts of its current pods.
  int32_t restarts = 0;

  kube::Json ToJson() const;
  friend bool operator==(const ReplicaStatus&, const ReplicaStatus&) = default;
};

// Pod phase → number of the task's current pods in it (DI-orchestrator's taskStatus).
using PodPhaseCounts = std::map<std::string, int32_t>;

struct JobStatus {
  std::string phase;
  std::vector<api::Condition> conditions;
  std::map<std::string, ReplicaStatus> replica_statuses;  // JSON "replicaStatuses", by task name.
  std::map<std::string, PodPhaseCounts> task_status;      // JSON "taskStatus", by task name.
  std::string task_summary;  // JSON "taskSummary": "learner 1/1, collector 3/4" (printer column).
  int32_t restarts = 0;      // Σ replicaStatuses[*].restarts.
  std::optional<absl::Time> start_time;
  std::optional<absl::Time> completion_time;
  std::optional<absl::Time> last_reconcile_time;

  const api::Condition* FindCondition(std::string_view type) const;
  bool IsConditionTrue(std::string_view type) const;
  bool IsSucceeded() const { return IsConditionTrue("Succeeded"); }
  bool IsFailed() const { return IsConditionTrue("Failed"); }
  bool IsFinished() const { return IsSucceeded() || IsFailed(); }

  kube::Json ToJson() const;
  friend bool operator==(const JobStatus&, const JobStatus&) = default;
};

// Reads a status object (as ToJson writes it); type errors are recorded with paths under `parent`.
JobStatus ReadJobStatus(const kube::Json& status, std::string_view parent,
                        api::FieldReader* reader);

}  // namespace nereid::job
