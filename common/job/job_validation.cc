#include "common/job/job_validation.h"

#include <map>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/api/json_fields.h"
#include "common/api/validation.h"
#include "common/job/pod_builder.h"
#include "common/strings/absl_compat.h"

namespace nereid::job {

using api::AddInvalid;
using api::AddRequired;
using api::IndexPath;
using api::JoinPath;

bool IsDnsLabel(std::string_view name) {
  if (name.empty() || name.size() > 63) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(name.front()) || !alnum(name.back())) return false;
  for (char c : name) {
    if (!alnum(c) && c != '-') return false;
  }
  return true;
}

bool IsDns1035Label(std::string_view name) {
  return IsDnsLabel(name) && name.front() >= 'a' && name.front() <= 'z';
}

std::vector<kube::StatusCause> ValidateJobSpec(const JobSpec& spec, std::string_view job_name,
                                               std::string_view spec_path) {
  std::vector<kube::StatusCause> causes;
  const std::string tasks_path = JoinPath(spec_path, "tasks");
  const std::string policy_path = JoinPath(spec_path, "runPolicy");

  if (!job_name.empty() && !IsDns1035Label(job_name)) {
    AddInvalid(
        "metadata.name",
        absl::StrCat("the job name \"", ToAbsl(job_name),
                     "\" also names its headless Service, so it must be a DNS-1035 label: "
                     "at most 63 lower-case letters, digits and '-', starting with a letter"),
        &causes);
  }
  if (spec.tasks.empty()) {
    AddRequired(tasks_path, "a job needs at least one task", &causes);
  }
  std::set<std::string> names;
  std::map<TaskType, size_t> typed;
  for (size_t i = 0; i < spec.tasks.size(); ++i) {
    const Task& task = spec.tasks[i];
    const std::string path = IndexPath(tasks_path, i);
    if (task.name.empty()) {
      AddRequired(JoinPath(path, "name"), "a task of type none needs a name", &causes);
    } else if (!IsDnsLabel(task.name)) {
      AddInvalid(JoinPath(path, "name"),
                 absl::StrCat("task name \"", task.name,
                              "\" must be a DNS-1123 label (lower-case letters, digits and '-')"),
                 &causes);
    } else if (!names.insert(task.name).second) {
      causes.push_back({std::string(api::cause_reasons::kDuplicate),
                        absl::StrCat("task name \"", task.name, "\" is used by another task"),
                        JoinPath(path, "name")});
    }
    if (task.type != TaskType::kNone) {
      auto [it, inserted] = typed.emplace(task.type, i);
      if (!inserted) {
        causes.push_back(
            {std::string(api::cause_reasons::kDuplicate),
             absl::StrCat("at most one task may have type ", ToAbsl(TaskTypeName(task.type)), " (",
                          IndexPath(tasks_path, it->second), " has it too)"),
             JoinPath(path, "type")});
      }
    }
    if (task.replicas.has_value() && *task.replicas < 0) {
      AddInvalid(JoinPath(path, "replicas"), "replicas must be >= 0", &causes);
    }
    api::ValidatePodTemplate(
        task.pod_template, JoinPath(path, "template"),
        absl::StrCat("task ", task.name.empty() ? std::to_string(i) : task.name), &causes);
    if (!task.name.empty() && IsDnsLabel(task.name) && !job_name.empty()) {
      std::string last_pod = PodName(job_name, task.name, std::max(task.Replicas() - 1, 0));
      if (!IsDnsLabel(last_pod)) {
        AddInvalid(JoinPath(path, "name"),
                   absl::StrCat("pod name \"", last_pod,
                                "\" (<job>-<task>-<index>) is also the pod's hostname and must be "
                                "a DNS-1123 label of at most 63 characters: shorten the job or "
                                "task name"),
                   &causes);
      }
    }
  }

  const RunPolicy& rp = spec.run_policy;
  if (rp.active_deadline_seconds.has_value() && *rp.active_deadline_seconds < 1) {
    AddInvalid(JoinPath(policy_path, "activeDeadlineSeconds"), "activeDeadlineSeconds must be >= 1",
               &causes);
  }
  if (rp.ttl_seconds_after_finished.has_value() && *rp.ttl_seconds_after_finished < 0) {
    AddInvalid(JoinPath(policy_path, "ttlSecondsAfterFinished"),
               "ttlSecondsAfterFinished must be >= 0", &causes);
  }
  if (rp.backoff_limit.has_value() && *rp.backoff_limit < 0) {
    AddInvalid(JoinPath(policy_path, "backoffLimit"), "backoffLimit must be >= 0", &causes);
  }
  if (rp.scheduling_policy.has_value() && rp.scheduling_policy->min_available.has_value()) {
    int32_t min_available = *rp.scheduling_policy->min_available;
    std::string field = JoinPath(JoinPath(policy_path, "schedulingPolicy"), "minAvailable");
    if (min_available < 0) {
      AddInvalid(field, "minAvailable must be >= 0", &causes);
    } else if (min_available > spec.TotalReplicas()) {
      AddInvalid(field,
                 absl::StrCat("minAvailable ", min_available, " is more than the job's ",
                              spec.TotalReplicas(), " replicas: the gang could never start"),
                 &causes);
    }
  }
  return causes;
}

}  // namespace nereid::job
