#pragma once

// The desired state every job kind shares (kubeflow common's RunPolicy + DI-orchestrator's task
// list): a RunPolicy and an ordered list of tasks, each with a type, replicas, a PodTemplateSpec
// and a restart policy. JSON spellings are the CRD's (see deploy/crds/sedna.io_distributedjobs.yaml
// and common/job/README.md). Parsing collects every type error with its field path
// (api::FieldReader); semantic checks are in job_validation.h.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/api/json_fields.h"
#include "common/kube/object.h"

namespace nereid::job {

// What to delete when the job finishes (Succeeded or Failed). Suspend, deadline and backoff
// failures delete everything regardless (training-operator semantics).
enum class CleanPodPolicy {
  kNone,     // Keep every pod (and the job's Service).
  kRunning,  // Delete Pending and Running pods; keep Succeeded/Failed ones for their logs. Default.
  kAll,      // Delete every pod.
};

// Per task, as training-operator's ReplicaSpec.restartPolicy (pod_failure.h: what a failure means).
enum class RestartPolicy {
  kAlways,     // Pod restartPolicy Always; a Failed pod is deleted and recreated.
  kOnFailure,  // Pod restartPolicy OnFailure; a Failed pod is deleted and recreated.
  kNever,      // Pod restartPolicy Never; a Failed pod fails the job.
  kExitCode,   // Pod restartPolicy Never; exit code >= 128 (or no exit code: evicted, node lost)
               // recreates the pod, 1-127 fails the job.
};

// Seed 003: what part of a distributed RL/training job a task is.
enum class TaskType { kNone, kLearner, kCollector, kEvaluator };

std::string_view CleanPodPolicyName(CleanPodPolicy policy);
std::optional<CleanPodPolicy> ParseCleanPodPolicy(std::string_view name);
std::string_view RestartPolicyName(RestartPolicy policy);
std::optional<RestartPolicy> ParseRestartPolicy(std::string_view name);
std::string_view TaskTypeName(TaskType type);  // "none", "learner", "collector", "evaluator"
std::optional<TaskType> ParseTaskType(std::string_view name);

inline constexpr CleanPodPolicy kDefaultCleanPodPolicy = CleanPodPolicy::kRunning;
inline constexpr int32_t kDefaultBackoffLimit = 6;  // batch/v1 Job's default.
inline constexpr int32_t kDefaultReplicas = 1;
// A task with no restartPolicy and no restartPolicy in its pod template.
inline constexpr RestartPolicy kDefaultRestartPolicy = RestartPolicy::kExitCode;

struct SchedulingPolicy {
  std::optional<int32_t> min_available;  // JSON "minAvailable"; default: all replicas.
  std::string queue;                     // Volcano queue; "" → "default".
  std::string priority_class;            // JSON "priorityClass" → PodGroup priorityClassName.

  kube::Json ToJson() const;
  friend bool operator==(const SchedulingPolicy&, const SchedulingPolicy&) = default;
};

struct RunPolicy {
  std::optional<CleanPodPolicy> clean_pod_policy;
  std::optional<int64_t> ttl_seconds_after_finished;
  std::optional<int64_t> active_deadline_seconds;
  std::optional<int32_t> backoff_limit;
  bool suspend = false;
  std::optional<SchedulingPolicy> scheduling_policy;

  CleanPodPolicy CleanPolicy() const { return clean_pod_policy.value_or(kDefaultCleanPodPolicy); }
  int32_t BackoffLimit() const { return backoff_limit.value_or(kDefaultBackoffLimit); }
  kube::Json ToJson() const;
  friend bool operator==(const RunPolicy&, const RunPolicy&) = default;
};

struct Task {
  std::string name;  // Defaulted to the type name when empty and the type is not none.
  TaskType type = TaskType::kNone;
  std::optional<int32_t> replicas;  // Default 1.
  kube::Json pod_template;          // JSON "template": a PodTemplateSpec, kept as written.
  std::optional<RestartPolicy> restart_policy;

  int32_t Replicas() const { return replicas.value_or(kDefaultReplicas); }
  // The policy in force: restartPolicy, else the template's spec.restartPolicy (Always, OnFailure
  // or Never), else kDefaultRestartPolicy.
  RestartPolicy EffectiveRestartPolicy() const;
  kube::Json ToJson() const;
  friend bool operator==(const Task&, const Task&) = default;
};

struct JobSpec {
  RunPolicy run_policy;
  std::vector<Task> tasks;

  // Σ replicas over all tasks.
  int32_t TotalReplicas() const;
  const Task* FindTask(std::string_view name) const;
  friend bool operator==(const JobSpec&, const JobSpec&) = default;
};

// Reads spec.runPolicy-shaped JSON at `path` (a missing or null object → defaults).
RunPolicy ReadRunPolicy(const kube::Json& obj, std::string_view key, std::string_view parent,
                        api::FieldReader* reader);
// Reads the task array obj[key]; typed tasks without a name get their type's name.
std::vector<Task> ReadTasks(const kube::Json& obj, std::string_view key, std::string_view parent,
                            api::FieldReader* reader);
kube::Json TasksToJson(const std::vector<Task>& tasks);

}  // namespace nereid::job
