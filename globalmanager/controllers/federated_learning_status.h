#pragma once

// The FederatedLearningJob status, from the common job library's JobStatus and the workers'
// reports (pure functions on the status JSON; the controller writes them through the status
// subresource).
//
// status (Sedna's fields first, then Nereid's additive ones):
//   phase           Pending | Running | Succeeded | Failed (Sedna's), Suspended (runPolicy.suspend).
//                   The library's Restarting shows as Running. Pending until every pod of the job
//                   runs (the library's Running rule), not Sedna's "Running at once".
//   conditions      Sedna's types Training | Complete | Failed as a bounded history
//                   (api::AppendCondition: a transition appends, the same state updates in place,
//                   at most 10) — never one condition per round like Sedna:
//                     Training=True   JobRunning / JobRestarting (with the library's message)
//                     Training=False  PodsNotRunning, JobSuspended, NoMatchingNodes
//                     Complete=True   JobSucceeded
//                     Failed=True     BackoffLimitExceeded | TaskFailed | DeadlineExceeded
//                   (SpecValid, spec_validity.h, shares the list for invalid specs.)
//   active          pods Pending or Running (Sedna counts non-terminated pods)
//   succeeded/failed  pods Succeeded / Failed
//   startTime, completionTime
//   currentRound    the highest training round a worker reported (ownerInfo.currentRound), and
//   roundUpdateTime when it was reported; cleared when a spec change restarts the pods.
//   restarts        retries so far (recreated pods + container restarts; backoffLimit bounds it)
//   observedGeneration
//   job             the library's JobStatus (conditions Created/Running/Restarting/Succeeded/
//                   Failed/Suspended, replicaStatuses and taskStatus per task, restarts, times):
//                   the state the next reconcile continues from.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "common/api/common_types.h"
#include "common/job/job_status.h"
#include "common/kube/object.h"

namespace nereid::gm {

namespace fl_conditions {
inline constexpr std::string_view kTraining = "Training";
inline constexpr std::string_view kComplete = "Complete";
inline constexpr std::string_view kFailed = "Failed";
}  // namespace fl_conditions

namespace fl_reasons {
inline constexpr std::string_view kNoMatchingNodes = "NoMatchingNodes";
inline constexpr std::string_view kSpecChanged = "SpecChanged";
inline constexpr std::string_view kRoundReported = "RoundReported";
// Both transmitters set: s3 is used (TRANSMITTER=s3), as in Sedna.
inline constexpr std::string_view kWsTransmitterIgnored = "WsTransmitterIgnored";
}  // namespace fl_reasons

inline constexpr std::string_view kFlJobStatusField = "job";

// The embedded library status (status.job); a missing or malformed one reads as a fresh status.
job::JobStatus ReadEmbeddedJobStatus(const kube::Json& object);

// The FL phase for the library's phase.
std::string_view FlPhase(std::string_view job_phase);

struct FlStatusUpdate {
  const job::JobStatus* job = nullptr;
  int64_t generation = 0;
  // Non-empty: no training worker is placed (a selector matches no edge node); the message says
  // which. Shown as Training=False NoMatchingNodes while the job is not finished.
  std::string no_nodes_message;
  absl::Time now;
};

// Writes the fields the reconcile owns into `status` (an object, or null which becomes one).
// currentRound/roundUpdateTime are left to the report handler and ResetRound.
void ApplyReconcileStatus(const FlStatusUpdate& update, kube::Json* status);

// A spec change restarts the pods: the round progress starts again (currentRound and
// roundUpdateTime go). Returns whether anything changed.
bool ResetRound(kube::Json* status);

// ownerInfo.currentRound of a worker report (a JSON object; a number or a numeric string), when
// present and > 0.
std::optional<int64_t> ReportedRound(std::string_view owner_info_json);
// Raises status.currentRound to `round` (and roundUpdateTime to `at`) when it is higher; returns
// whether anything changed.
bool ApplyRound(int64_t round, absl::Time at, kube::Json* status);

// The metrics of the first model in a worker report's results (Sedna: output.models[0].metrics),
// as Model status metrics {key, value}, sorted by key. A number becomes its shortest decimal form,
// a list of numbers the numbers joined by ',', a string stays as it is. Empty when there are none
// or the JSON is malformed.
std::vector<api::Metric> ReportedMetrics(std::string_view results_json);
// Sets a Model's status.metrics (and updateTime = `at`) when they differ; returns whether changed.
bool ApplyModelMetrics(const std::vector<api::Metric>& metrics, absl::Time at, kube::Json* status);

}  // namespace nereid::gm
