#include "common/job/job_spec.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "common/strings/absl_compat.h"

namespace nereid::job {

using api::FieldReader;
using api::IndexPath;
using api::JoinPath;
using kube::Json;

namespace {

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

// Reads an enum-valued string; an unknown value is FieldValueNotSupported naming the choices.
template <typename E>
std::optional<E> ReadEnum(const Json& obj, std::string_view key, std::string_view parent,
                          FieldReader* reader, std::optional<E> (*parse)(std::string_view),
                          std::string_view choices) {
  std::optional<std::string> text = reader->String(obj, key, parent);
  if (!text.has_value()) return std::nullopt;
  std::optional<E> value = parse(*text);
  if (!value.has_value()) {
    reader->AddCause(
        JoinPath(parent, key), "FieldValueNotSupported",
        absl::StrCat("unsupported value \"", *text, "\": supported values are ", ToAbsl(choices)));
  }
  return value;
}

std::optional<int32_t> ReadInt32(const Json& obj, std::string_view key, std::string_view parent,
                                 FieldReader* reader) {
  std::optional<int64_t> value = reader->Int(obj, key, parent, 0, kInt32Max);
  if (!value.has_value()) return std::nullopt;
  return static_cast<int32_t>(*value);
}

}  // namespace

std::string_view CleanPodPolicyName(CleanPodPolicy policy) {
  switch (policy) {
    case CleanPodPolicy::kNone:
      return "None";
    case CleanPodPolicy::kRunning:
      return "Running";
    case CleanPodPolicy::kAll:
      return "All";
  }
  return "Running";
}

std::optional<CleanPodPolicy> ParseCleanPodPolicy(std::string_view name) {
  if (name == "None") return CleanPodPolicy::kNone;
  if (name == "Running") return CleanPodPolicy::kRunning;
  if (name == "All") return CleanPodPolicy::kAll;
  return std::nullopt;
}

std::string_view RestartPolicyName(RestartPolicy policy) {
  switch (policy) {
    case RestartPolicy::kAlways:
      return "Always";
    case RestartPolicy::kOnFailure:
      return "OnFailure";
    case RestartPolicy::kNever:
      return "Never";
    case RestartPolicy::kExitCode:
      return "ExitCode";
  }
  return "Never";
}

std::optional<RestartPolicy> ParseRestartPolicy(std::string_view name) {
  if (name == "Always") return RestartPolicy::kAlways;
  if (name == "OnFailure") return RestartPolicy::kOnFailure;
  if (name == "Never") return RestartPolicy::kNever;
  if (name == "ExitCode") return RestartPolicy::kExitCode;
  return std::nullopt;
}

std::string_view TaskTypeName(TaskType type) {
  switch (type) {
    case TaskType::kNone:
      return "none";
    case TaskType::kLearner:
      return "learner";
    case TaskType::kCollector:
      return "collector";
    case TaskType::kEvaluator:
      return "evaluator";
  }
  return "none";
}

std::optional<TaskType> ParseTaskType(std::string_view name) {
  if (name == "none") return TaskType::kNone;
  if (name == "learner") return TaskType::kLearner;
  if (name == "collector") return TaskType::kCollector;
  if (name == "evaluator") return TaskType::kEvaluator;
  return std::nullopt;
}

Json SchedulingPolicy::ToJson() const {
  Json out = Json::object();
  if (min_available.has_value()) out["minAvailable"] = *min_available;
  if (!queue.empty()) out["queue"] = queue;
  if (!priority_class.empty()) out["priorityClass"] = priority_class;
  return out;
}

Json RunPolicy::ToJson() const {
  Json out = Json::object();
  if (clean_pod_policy.has_value()) {
    out["cleanPodPolicy"] = std::string(CleanPodPolicyName(*clean_pod_policy));
  }
  if (ttl_seconds_after_finished.has_value()) {
    out["ttlSecondsAfterFinished"] = *ttl_seconds_after_finished;
  }
  if (active_deadline_seconds.has_value()) {
    out["activeDeadlineSeconds"] = *active_deadline_seconds;
  }
  if (backoff_limit.has_value()) out["backoffLimit"] = *backoff_limit;
  if (suspend) out["suspend"] = true;
  if (scheduling_policy.has_value()) out["schedulingPolicy"] = scheduling_policy->ToJson();
  return out;
}

RestartPolicy Task::EffectiveRestartPolicy() const {
  if (restart_policy.has_value()) return *restart_policy;
  const Json* in_template = kube::FindPath(pod_template, "spec.restartPolicy");
  if (in_template != nullptr && in_template->is_string()) {
    std::optional<RestartPolicy> parsed = ParseRestartPolicy(in_template->get<std::string>());
    // ExitCode is not a pod restartPolicy; the API server would reject the pod anyway.
    if (parsed.has_value() && *parsed != RestartPolicy::kExitCode) return *parsed;
  }
  return kDefaultRestartPolicy;
}

Json Task::ToJson() const {
  Json out = Json::object();
  if (!name.empty()) out["name"] = name;
  out["type"] = std::string(TaskTypeName(type));
  if (replicas.has_value()) out["replicas"] = *replicas;
  if (!pod_template.is_null()) out["template"] = pod_template;
  if (restart_policy.has_value()) {
    out["restartPolicy"] = std::string(RestartPolicyName(*restart_policy));
  }
  return out;
}

int32_t JobSpec::TotalReplicas() const {
  int64_t total = 0;
  for (const Task& task : tasks) total += task.Replicas();
  return static_cast<int32_t>(std::min<int64_t>(total, kInt32Max));
}

const Task* JobSpec::FindTask(std::string_view name) const {
  for (const Task& task : tasks) {
    if (task.name == name) return &task;
  }
  return nullptr;
}

RunPolicy ReadRunPolicy(const Json& obj, std::string_view key, std::string_view parent,
                        FieldReader* reader) {
  RunPolicy policy;
  const Json* json = reader->Object(obj, key, parent);
  if (json == nullptr) return policy;
  std::string path = JoinPath(parent, key);
  policy.clean_pod_policy = ReadEnum<CleanPodPolicy>(*json, "cleanPodPolicy", path, reader,
                                                     &ParseCleanPodPolicy, "None, Running, All");
  policy.ttl_seconds_after_finished = reader->Int(*json, "ttlSecondsAfterFinished", path, 0);
  policy.active_deadline_seconds = reader->Int(*json, "activeDeadlineSeconds", path, 0);
  policy.backoff_limit = ReadInt32(*json, "backoffLimit", path, reader);
  policy.suspend = reader->Bool(*json, "suspend", path).value_or(false);
  const Json* scheduling = reader->Object(*json, "schedulingPolicy", path);
  if (scheduling != nullptr) {
    std::string spath = JoinPath(path, "schedulingPolicy");
    SchedulingPolicy sp;
    sp.min_available = ReadInt32(*scheduling, "minAvailable", spath, reader);
    sp.queue = reader->String(*scheduling, "queue", spath).value_or("");
    sp.priority_class = reader->String(*scheduling, "priorityClass", spath).value_or("");
    policy.scheduling_policy = std::move(sp);
  }
  return policy;
}

std::vector<Task> ReadTasks(const Json& obj, std::string_view key, std::string_view parent,
                            FieldReader* reader) {
  std::vector<Task> tasks;
  const Json* list = reader->Array(obj, key, parent);
  if (list == nullptr) return tasks;
  std::string path = JoinPath(parent, key);
  for (size_t i = 0; i < list->size(); ++i) {
    const Json& item = (*list)[i];
    std::string item_path = IndexPath(path, i);
    if (!item.is_object()) {
      reader->AddTypeError(item_path, "an object", item);
      continue;
    }
    Task task;
    task.name = reader->String(item, "name", item_path).value_or("");
    task.type = ReadEnum<TaskType>(item, "type", item_path, reader, &ParseTaskType,
                                   "learner, collector, evaluator, none")
                    .value_or(TaskType::kNone);
    task.replicas = ReadInt32(item, "replicas", item_path, reader);
    const Json* pod_template = reader->Object(item, "template", item_path);
    task.pod_template = pod_template == nullptr ? Json(nullptr) : *pod_template;
    task.restart_policy =
        ReadEnum<RestartPolicy>(item, "restartPolicy", item_path, reader, &ParseRestartPolicy,
                                "Always, OnFailure, Never, ExitCode");
    // DI-orchestrator: a typed task without a name is named after its type.
    if (task.name.empty() && task.type != TaskType::kNone) {
      task.name = std::string(TaskTypeName(task.type));
    }
    tasks.push_back(std::move(task));
  }
  return tasks;
}

Json TasksToJson(const std::vector<Task>& tasks) {
  Json out = Json::array();
  for (const Task& task : tasks) out.push_back(task.ToJson());
  return out;
}

}  // namespace nereid::job
