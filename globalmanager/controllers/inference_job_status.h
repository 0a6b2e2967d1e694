#pragma once

// The status of Sedna's multi-edge inference jobs (VideoAnalyticsJob, ReidJob) from the common job
// library's JobStatus: pure functions on the status JSON; inference_job_controller.h writes them
// through the status subresource.
//
// status (Sedna's fields first, then Nereid's additive ones):
//   phase           Pending | Running | Succeeded | Failed (Sedna's), Suspended (spec.suspend).
//                   The library's Restarting shows as Running.
//   conditions      Sedna's types as a bounded history (api::AppendCondition: a transition
//                   appends, the same state updates in place, at most 10):
//                     Waiting=True    JobSuspended
//                     Starting=True   JobCreated / PodsNotRunning (pods created, not all running)
//                     Running=True    JobRunning / JobRestarting
//                     Completed=True  JobSucceeded
//                     Failed=True     BackoffLimitExceeded | TaskFailed | DeadlineExceeded
//                   (SpecValid, spec_validity.h, shares the list: for invalid specs, and
//                   False/ModelNotFound while the VideoAnalyticsJob's Model does not exist yet or
//                   its Secret cannot be read — model_resolver.h; nothing is created until then.)
//   active          pods Pending or Running; succeeded / failed: pods in those phases
//   startTime, completionTime, restarts (retries so far), observedGeneration
//   job             the library's JobStatus, which the next reconcile continues from
// status.metrics (VideoAnalyticsJob) belongs to the report handler and is left alone here.

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/time/time.h"
#include "common/job/job_status.h"
#include "common/kube/object.h"
#include "globalmanager/controllers/model_resolver.h"

namespace nereid::gm {

namespace inference_job_reasons {
inline constexpr std::string_view kSpecChanged = "SpecChanged";
}  // namespace inference_job_reasons

inline constexpr std::string_view kInferenceJobStatusField = "job";

// The embedded library status (status.job); a missing or malformed one reads as a fresh status.
job::JobStatus ReadInferenceJobLibraryStatus(const kube::Json& object);

struct InferenceJobStatusUpdate {
  const job::JobStatus* job = nullptr;  // Null while waiting for the Model (nothing created).
  int64_t generation = 0;
  // Non-empty: the job waits for its Model (the message says which): SpecValid=False with
  // `waiting_reason` (model_resolver.h), phase Pending.
  std::string waiting_for_model;
  // ModelNotFound, or why the Model's Secret cannot be read.
  std::string waiting_reason = std::string(kModelNotFound);
  absl::Time now;
};

// Writes the fields the reconcile owns into `status` (an object, or null which becomes one).
void ApplyInferenceJobStatus(const InferenceJobStatusUpdate& update, kube::Json* status);

}  // namespace nereid::gm
