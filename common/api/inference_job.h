#pragma once

// What Sedna's two multi-edge inference *jobs* (VideoAnalyticsJob, ReidJob) share: the batch/v1
// JobSpec fields they embed inline in their spec, and their status.
//
// Sedna embeds `batch/v1 JobSpec` but honours only `template`; Nereid runs the job through the
// common job library (common/job), so these fields mean what they mean for a batch/v1 Job:
//   completions              pods that must succeed (default 1); all of them run at once
//   parallelism              when set, at least `completions` (every completion runs at once)
//   backoffLimit             retries before the job fails (default 6)
//   activeDeadlineSeconds    the job fails when it runs longer
//   ttlSecondsAfterFinished  the finished job is deleted after this long
//   suspend                  pods deleted while true; resuming restarts the deadline
//   template                 the worker pod; restartPolicy Always is refused (the pod could never
//                            finish); Never (also when absent) replaces a failed pod with a new
//                            one, OnFailure restarts its containers in place; both count against
//                            backoffLimit
// The other batch/v1 fields (selector, manualSelector, completionMode, podFailurePolicy,
// successPolicy, backoffLimitPerIndex, maxFailedIndexes, podReplacementPolicy, managedBy) are kept
// as written so Sedna manifests round-trip, and are not acted on (Sedna ignores them too).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "common/api/common_types.h"
#include "common/api/json_fields.h"
#include "common/kube/errors.h"
#include "common/kube/object.h"

namespace nereid::api {

struct InlineJobSpec {
  std::optional<int32_t> parallelism;
  std::optional<int32_t> completions;
  std::optional<int64_t> active_deadline_seconds;  // JSON "activeDeadlineSeconds".
  std::optional<int32_t> backoff_limit;            // JSON "backoffLimit".
  std::optional<int32_t> ttl_seconds_after_finished;
  std::optional<bool> suspend;
  PodTemplate pod_template;  // JSON "template".
  // The batch/v1 fields listed above that Nereid keeps but does not act on, by JSON name.
  kube::Json kept = kube::Json::object();

  int32_t Completions() const { return completions.value_or(1); }
  // Writes the fields into `spec` (an object), next to the kind's own.
  void ToJson(kube::Json* spec) const;
  friend bool operator==(const InlineJobSpec&, const InlineJobSpec&) = default;
};

// Reads the inline JobSpec fields of `spec` (at "spec").
InlineJobSpec ReadInlineJobSpec(const kube::Json& spec, FieldReader* reader);
// template present and valid (worker `worker`), restartPolicy not Always, bounds of the counts.
void ValidateInlineJobSpec(const InlineJobSpec& job, std::string_view worker,
                           std::vector<kube::StatusCause>* out);

// The pod restartPolicy of a template ("" when it sets none).
std::string TemplateRestartPolicy(const PodTemplate& pod_template);

// status.metrics holds at most this many entries (the CRD's maxItems).
inline constexpr size_t kMaxInferenceJobMetrics = 32;

namespace inference_job_phases {
inline constexpr std::string_view kPending = "Pending";
inline constexpr std::string_view kRunning = "Running";
inline constexpr std::string_view kSucceeded = "Succeeded";
inline constexpr std::string_view kFailed = "Failed";
inline constexpr std::string_view kSuspended = "Suspended";  // Nereid: spec.suspend.
}  // namespace inference_job_phases

// Sedna's condition types of these jobs (Sedna writes only Completed and Failed).
namespace inference_job_conditions {
inline constexpr std::string_view kWaiting = "Waiting";
inline constexpr std::string_view kStarting = "Starting";
inline constexpr std::string_view kRunning = "Running";
inline constexpr std::string_view kCompleted = "Completed";
inline constexpr std::string_view kFailed = "Failed";
}  // namespace inference_job_conditions

// Sedna's fields: phase, conditions, startTime, completionTime, active/succeeded/failed pod counts.
// Nereid adds restarts, metrics (the latest worker report of a VideoAnalyticsJob, bounded),
// observedGeneration, and `job` (the common job library's status, which the controller continues
// from; read and written as JSON by the controller, kept here as written).
struct InferenceJobStatus {
  std::string phase;
  std::vector<Condition> conditions;
  std::optional<absl::Time> start_time;
  std::optional<absl::Time> completion_time;
  int32_t active = 0;
  int32_t succeeded = 0;
  int32_t failed = 0;
  std::optional<int32_t> restarts;
  std::vector<Metric> metrics;
  std::optional<int64_t> observed_generation;
  kube::Json job;  // null when absent.

  kube::Json ToJson() const;
  friend bool operator==(const InferenceJobStatus&, const InferenceJobStatus&) = default;
};

InferenceJobStatus ReadInferenceJobStatus(const kube::Json& status, FieldReader* reader);

}  // namespace nereid::api
