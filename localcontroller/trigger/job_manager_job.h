#pragma once

// Internal to the job manager (job_manager.cc: the jobs, their state and reports;
// job_stages.cc: what each stage does on this node): a job as the manager holds it, and the
// stage machine's words.

#include <optional>
#include <string>

#include "absl/time/time.h"
#include "localcontroller/trigger/job_manager.h"
#include "localcontroller/trigger/trigger.h"
#include "nereid/edge/v1/resources.pb.h"

namespace nereid::lc::trigger {

inline constexpr char kTrain[] = "Train";
inline constexpr char kEval[] = "Eval";
inline constexpr char kDeploy[] = "Deploy";
inline constexpr char kWaiting[] = "Waiting";
inline constexpr char kStarting[] = "Starting";
// When the database or the dataset count is not available yet.
inline constexpr absl::Duration kRetry = absl::Seconds(5);
// The least wait before a write that failed (reported as Failed) is tried again.
inline constexpr absl::Duration kWriteRetry = absl::Minutes(1);

struct JobManager::Job {
  edge::v1::ObjectRef ref;
  std::string version;
  bool lifelong = false;
  std::string dataset_name;
  double train_prob = 1.0;
  std::optional<Trigger> train_trigger;
  std::optional<Trigger> deploy_trigger;
  std::string trigger_error;
  std::string initial_model;
  std::string deploy_model;
  std::string initial_eval_model;
  bool hot_update = false;
  std::string output_dir;
  edge::v1::StageNodes nodes;
  edge::v1::JobStage current;

  bool loaded = false;
  JobState state;
  std::string last_event;  // base64 of the last TriggerEvent sent, for a resend
  absl::Time reported_at = absl::InfinitePast();
  absl::Time next_check = absl::InfinitePast();
  absl::Time write_retry_at = absl::InfinitePast();  // after a failed write (FailPreparation)
};

}  // namespace nereid::lc::trigger
