#pragma once

// The Train -> Eval -> Deploy stage machine of IncrementalLearningJob and LifelongLearningJob
// (the conditions and stage names Sedna's controllers and LC write), as pure functions of the job's
// latest condition and what the controller observed, so every transition is table-tested. The
// controllers (staged_job_controller.h) append the returned conditions with api::AppendCondition
// (bounded) and act on the new state.
//
// The job's state is its latest condition (stage, type). Transitions:
//
//   latest                 | observed                                  | next
//   -----------------------+-------------------------------------------+----------------------------
//   (none)                 |                                           | Waiting(Train)
//   Waiting(S)             | LC: Ready(S) (trigger fired, with input)  | Ready(S)          [report]
//   Waiting(S)             | LC: Failed(S) (cannot prepare the stage)  | Failed(S)         [report]
//   Waiting(Deploy)        | LC: Completed (deploy trigger not fired)  | Completed(Deploy) [report]
//   Ready(Train|Eval)      |                                           | Starting(S): a new stage
//   run Ready(Deploy)          |                                           | Starting(Deploy): the
//   deploy
//                          |                                           |   node's LC installs the
//                          model
//   Starting|Running(T|E)  | stage pod running                         | Running(S)
//   Starting|Running(T|E)  | stage pod succeeded                       | Completed(S)
//   Starting|Running(T|E)  | stage run failed (retries exhausted, ...) | Failed(S)
//   Starting(Deploy)       | LC: Installed, hot update on              | Completed(Deploy) [report]
//   Starting(Deploy)       | LC: Installed, hot update off             | Running(Deploy) [report]:
//                          |                                           |   the inference pod
//                          restarts
//   Starting(Deploy)       | LC: Failed(Deploy)                        | Failed(Deploy)    [report]
//   Running(Deploy)        | restarted inference pod running           | Completed(Deploy)
//   Completed(Train|Eval)  | worker output reported, or grace over     | Waiting(next stage)
//   Completed(Deploy)      |                                           | Waiting(Train)
//   Failed(any)            |                                           | Waiting(Train), the
//                          |                                           |   failure's cause kept
//
// [report] rows come from the LC (OnStageReport); the others from the controller's own
// observations (NextTransition). Differences from Sedna, on purpose: Ready(Deploy) waits for the
// deploy node to install the model before restarting the inference worker (Sedna restarts it from
// the trigger node, which breaks when the stages run on different nodes, Sedna #67);
// Completed(Train |Eval) waits (bounded) for the worker's output report, so the next stage is never
// started without the model it needs (Sedna #317: the stage machine stalled when the pod's
// Succeeded raced the worker's report); a stage's pods are cleaned up when it completes.

#include <optional>
#include <string>
#include <string_view>

#include "common/api/common_types.h"

namespace nereid::gm::stages {

using api::stage_states::kCompleted;
using api::stage_states::kFailed;
using api::stage_states::kReady;
using api::stage_states::kRunning;
using api::stage_states::kStarting;
using api::stage_states::kWaiting;
using api::stages::kDeploy;
using api::stages::kEval;
using api::stages::kTrain;

// Train -> Eval -> Deploy -> Train.
std::string_view NextStage(std::string_view stage);
bool IsStage(std::string_view stage);
bool IsStageState(std::string_view state);
// Train and Eval run a stage pod (through the common job library); Deploy restarts or reloads the
// inference worker.
bool RunsStagePod(std::string_view stage);

// Condition reasons (also the Event reasons of the transitions the controller records).
namespace reasons {
inline constexpr std::string_view kJobStarted = "JobStarted";
inline constexpr std::string_view kTriggerFired = "TriggerFired";
inline constexpr std::string_view kStageRunStarted = "StageRunStarted";
inline constexpr std::string_view kPodRunning = "PodRunning";
inline constexpr std::string_view kPodSucceeded = "PodSucceeded";
inline constexpr std::string_view kStageRunFailed = "StageRunFailed";
inline constexpr std::string_view kPreparationFailed = "PreparationFailed";
inline constexpr std::string_view kInstallingModel = "InstallingModel";
inline constexpr std::string_view kModelInstalled = "ModelInstalled";
inline constexpr std::string_view kModelReloaded = "ModelReloaded";
inline constexpr std::string_view kInferenceRestarted = "InferenceRestarted";
inline constexpr std::string_view kNotDeployed = "NotDeployed";
inline constexpr std::string_view kNextStage = "NextStage";
inline constexpr std::string_view kOutputMissing = "OutputMissing";
inline constexpr std::string_view kRetrain = "Retrain";
}  // namespace reasons

// The LC's TriggerEvent.status values (edge::v1::TriggerEvent).
namespace report_status {
inline constexpr std::string_view kReady = "Ready";          // the stage may start (with input)
inline constexpr std::string_view kCompleted = "Completed";  // deploy trigger did not fire
inline constexpr std::string_view kInstalled = "Installed";  // deploy node installed the model
inline constexpr std::string_view kFailed = "Failed";        // the LC cannot prepare the stage
}  // namespace report_status

// The state of the current Train/Eval stage run (its pods, through the common job library).
enum class RunPhase {
  kNotStarted,  // no run yet (the Starting condition was just written)
  kPending,     // pods created, none running
  kRunning,
  kSucceeded,
  kFailed,
};

// What the controller observed in this pass.
struct Facts {
  RunPhase run = RunPhase::kNotStarted;
  std::string run_message;  // why the run failed / how it is doing
  // Deploy, hot update off: the inference pod carrying the newly deployed model is running.
  bool inference_restarted = false;
  // Completed(Train|Eval): the worker reported its output models / the wait for them is over.
  bool output_reported = false;
  bool output_grace_over = false;
};

// A condition to append.
struct Transition {
  std::string stage;
  std::string type;
  std::string reason;
  std::string message;
  // The new condition keeps the latest condition's data (input/output) — true within one stage,
  // false when the next stage begins.
  bool keep_data = true;

  friend bool operator==(const Transition&, const Transition&) = default;
};

// The transition the controller makes on its own from `latest` (nullptr: no condition yet), or
// nullopt when the job waits (for the LC, for pods, ...).
std::optional<Transition> NextTransition(const api::Condition* latest, const Facts& facts);

// What an LC report (TriggerEvent of `stage` with `status`) does to `latest`: the transition, or
// nullopt with `ignored` saying why (a stale or repeated report is not an error: the LC resends).
struct StageReportOutcome {
  std::optional<Transition> transition;
  std::string ignored;
};
StageReportOutcome OnStageReport(const api::Condition* latest, std::string_view stage,
                                 std::string_view status, std::string_view lc_reason,
                                 bool hot_update);

}  // namespace nereid::gm::stages
