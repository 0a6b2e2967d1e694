#pragma once

// The LC half of the IncrementalLearningJob / LifelongLearningJob stage machine (Sedna's
// managers/incrementallearning and lifelonglearning), fixed where Sedna is weak
// (docs/sedna-compatibility.md).
// The daemon dispatches IL/LL Resources here (ResourceHandler); the GM's stage machine
// (globalmanager/controllers/stage_machine.h) acts on the TriggerEvents this sends upstream.
//
// Per job, from the job's current condition (JobStage in the spec the GM sends):
//   Waiting(Train), this node holds the Dataset: every trainSpec.trigger checkPeriodSeconds (Sedna:
//     a fixed 10 s) the trigger is evaluated with num_of_samples = the dataset's live count minus
//     the samples consumed by earlier rounds. Fired: rounds+1, the new samples are written to
//     <outputDir>/data/train/<round>/data.txt (host path under the host root; a remote or
//     unreadable dataset is passed by its URL instead), and Ready(Train) is reported with input
//     {models: [base model], dataURL, outputDir: <outputDir>/train/<round>}.
//   A file that cannot be written (outputDir on a read-only mount, outside the data roots, disk
//     full) is reported as Failed(<stage>) with the cause, so the job's conditions and Events say
//     why; the GM then waits for the train trigger again, and the write is retried no sooner than
//     the trigger's period (at least kWriteRetry), the samples still counted as new.
//   Waiting(Eval), dataset node: Ready(Eval) with input {models: the trained model(s) from the
//     previous stage's output + the deploy / initial eval model, dataURL: the round's samples}.
//   Waiting(Deploy), dataset node: IL evaluates deploySpec.trigger with `<metric>` (the new model's
//     metrics) and `<metric>_delta` (new - old, per element) from the eval output models; fired →
//     Ready(Deploy) with the trained model as input, else Completed(Deploy). LL deploys always.
//   Starting(Deploy), deploy node (stageNodes.deploy, else the dataset node): with hot update the
//     file /var/lib/sedna/model-hot-update/<ns>/<lower kind>/<name>/model_config.json
//     ({"model_config":{"model_path", "model_update_time"}}) is written (atomically: temp file +
//     rename); Installed(Deploy) is reported.
// A report is sent once per condition: the job remembers what it reported until the GM's current
// condition moves on (the report stays in the durable outbox until the GM ACKs it).
//
// State (rounds, samples consumed, what was reported) lives in the LC database's meta table, keyed
// by the job, written in the same transaction as the report it goes with, so an LC restart resumes
// the rounds and counters exactly (Sedna PR #152 kept them in annotations). Time is the injected
// Clock; the evaluation thread waits on it, so tests drive it with a FakeClock.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/time/clock.h"
#include "common/time/wall_clock_steps.h"
#include "localcontroller/dataset/data_roots.h"
#include "localcontroller/db/lc_database.h"
#include "localcontroller/resource_handler.h"
#include "localcontroller/trigger/trigger.h"
#include "nereid/edge/v1/resources.pb.h"
#include "nereid/edge/v1/status.pb.h"

namespace nereid::lc::trigger {

// The persisted per-job state (meta key "lcjob/<kind>/<ns>/<name>", JSON).
struct JobState {
  std::string uid;
  int64_t rounds = 0;
  uint64_t consumed = 0;      // dataset samples taken by earlier training rounds
  std::string reported;       // "<stage>:<type>" reported for the current condition, "" if none
  std::string last_data_url;  // the latest round's samples (Eval reuses them)
  bool operator==(const JobState&) const = default;
};

class JobManager final : public ResourceHandler {
 public:
  struct Options {
    db::LcDatabase* db = nullptr;  // required
    std::string node_name;         // required
    std::string host_root = "/";   // host paths resolve under it (the LC's /rootfs)
    dataset::DataRoots data_roots;  // host paths it reads or writes must lie in one
    Clock* clock = Clock::Real();
    absl::TimeZone zone = absl::LocalTimeZone();
    // The live sample count of dataset "ns/name" (the dataset monitor's latest result); nullopt
    // while unknown (not counted yet, or the last scan failed).
    std::function<std::optional<uint64_t>(const std::string& key)> dataset_count;
  };

  explicit JobManager(Options options);
  ~JobManager() override;  // Stop()
  JobManager(const JobManager&) = delete;
  JobManager& operator=(const JobManager&) = delete;

  // ResourceHandler (cloud-link / starting thread): stores the spec and wakes the evaluator; no
  // I/O.
  void Apply(const edge::v1::Resource& resource) override;
  void Forget(const edge::v1::ObjectRef& ref) override;

  // The evaluation thread (Poll whenever a job is due or changed). Idempotent.
  void Start();
  void Stop();

  // One evaluation of every due job at the clock's Now(); returns the next time one is due
  // (InfiniteFuture when none). Public for tests, which drive it without the thread.
  absl::Time Poll();

  // The state of a job ("<kind>/<ns>/<name>"), for tests and diagnostics.
  std::optional<JobState> State(const std::string& job_key) const;
  size_t size() const;

 private:
  struct Job;

  absl::Time PollLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // What to do for `job` now; updates its next check time.
  void Evaluate(Job& job, absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void EvaluateTrain(Job& job, absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ReadyEval(Job& job, absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void EvaluateDeploy(Job& job, absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void InstallDeploy(Job& job, absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Sends the TriggerEvent and stores `next` in one transaction; the in-memory state follows
  // only when it committed.
  absl::Status Report(Job& job, edge::v1::TriggerEvent event, const JobState& next)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status LoadState(Job& job) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool HoldsDataset(const Job& job) const;
  std::optional<std::string> DatasetUrl(const Job& job) const;
  std::optional<std::string> ModelUrl(const std::string& ns, const std::string& name) const;
  // The LC-local path of a host path in a data root (OutsideDataRoots otherwise).
  absl::StatusOr<std::string> LocalPath(const std::string& host_path) const;
  // Writes a host file atomically; the error names the host path and the cause.
  absl::Status WriteHostFile(const std::string& host_path, const std::string& contents) const;
  // Reports Failed(stage) with `reason` (a file could not be written) and holds the job's next
  // attempt back for the train trigger's period, at least kWriteRetry.
  void FailPreparation(Job& job, absl::Time now, std::string_view stage, std::string reason)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;

  mutable absl::Mutex mu_;
  std::map<std::string, Job> jobs_ ABSL_GUARDED_BY(mu_);
  bool wake_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // Checks are scheduled at wall-clock times: a step of the clock back moves them back.
  WallClockSteps steps_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

// "<kind>/<ns>/<name>".
std::string JobKey(const edge::v1::ObjectRef& ref);
// Meta key of a job's state.
std::string JobStateMetaKey(const edge::v1::ObjectRef& ref);
// Writes `contents` to `path` atomically (temp file in the same directory + rename), creating
// the parent directories. The error says which step failed and why ("creating its directory:
// Read-only file system"), not the path: the caller names it as its user knows it.
absl::Status WriteFileAtomically(const std::string& path, const std::string& contents);

}  // namespace nereid::lc::trigger
