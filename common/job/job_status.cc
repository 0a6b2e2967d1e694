#include "common/job/job_status.h"

#include <limits>

namespace nereid::job {

using api::FieldReader;
using api::JoinPath;
using kube::Json;

namespace {

void PutTime(Json* json, const char* key, const std::optional<absl::Time>& time) {
  if (time.has_value()) (*json)[key] = kube::FormatTimestamp(*time);
}

int32_t ReadCount(const Json& obj, std::string_view key, std::string_view parent,
                  FieldReader* reader) {
  return static_cast<int32_t>(
      reader->Int(obj, key, parent, 0, std::numeric_limits<int32_t>::max()).value_or(0));
}

}  // namespace

Json ReplicaStatus::ToJson() const {
  return {{"active", active},
          {"succeeded", succeeded},
          {"failed", failed},
          {"recreated", recreated},
          {"restarts", restarts}};
}

const api::Condition* JobStatus::FindCondition(std::string_view type) const {
  for (const api::Condition& c : conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

bool JobStatus::IsConditionTrue(std::string_view type) const {
  const api::Condition* c = FindCondition(type);
  return c != nullptr && c->IsTrue();
}

Json JobStatus::ToJson() const {
  Json out = Json::object();
  if (!phase.empty()) out["phase"] = phase;
  out["conditions"] = api::ConditionsToJson(conditions);
  Json replicas = Json::object();
  for (const auto& [task, rs] : replica_statuses) replicas[task] = rs.ToJson();
  out["replicaStatuses"] = std::move(replicas);
  Json tasks = Json::object();
  for (const auto& [task, counts] : task_status) {
    Json phases_json = Json::object();
    for (const auto& [phase_name, n] : counts) phases_json[phase_name] = n;
    tasks[task] = std::move(phases_json);
  }
  out["taskStatus"] = std::move(tasks);
  if (!task_summary.empty()) out["taskSummary"] = task_summary;
  out["restarts"] = restarts;
  PutTime(&out, "startTime", start_time);
  PutTime(&out, "completionTime", completion_time);
  PutTime(&out, "lastReconcileTime", last_reconcile_time);
  return out;
}

JobStatus ReadJobStatus(const Json& status, std::string_view parent, FieldReader* reader) {
  JobStatus out;
  if (!status.is_object()) return out;
  out.phase = reader->String(status, "phase", parent).value_or("");
  out.conditions = api::ReadConditions(status, parent, reader);
  if (const Json* replicas = reader->Object(status, "replicaStatuses", parent);
      replicas != nullptr) {
    std::string path = JoinPath(parent, "replicaStatuses");
    for (const auto& [task, value] : replicas->items()) {
      std::string task_path = JoinPath(path, task);
      if (!value.is_object()) {
        reader->AddTypeError(task_path, "an object", value);
        continue;
      }
      ReplicaStatus rs;
      rs.active = ReadCount(value, "active", task_path, reader);
      rs.succeeded = ReadCount(value, "succeeded", task_path, reader);
      rs.failed = ReadCount(value, "failed", task_path, reader);
      rs.recreated = ReadCount(value, "recreated", task_path, reader);
      rs.restarts = ReadCount(value, "restarts", task_path, reader);
      out.replica_statuses[task] = rs;
    }
  }
  if (const Json* tasks = reader->Object(status, "taskStatus", parent); tasks != nullptr) {
    std::string path = JoinPath(parent, "taskStatus");
    for (const auto& [task, value] : tasks->items()) {
      std::string task_path = JoinPath(path, task);
      if (!value.is_object()) {
        reader->AddTypeError(task_path, "an object", value);
        continue;
      }
      PodPhaseCounts counts;
      for (const auto& [phase_name, n] : value.items()) {
        counts[phase_name] = ReadCount(value, phase_name, task_path, reader);
      }
      out.task_status[task] = std::move(counts);
    }
  }
  out.task_summary = reader->String(status, "taskSummary", parent).value_or("");
  out.restarts = ReadCount(status, "restarts", parent, reader);
  out.start_time = reader->Time(status, "startTime", parent);
  out.completion_time = reader->Time(status, "completionTime", parent);
  out.last_reconcile_time = reader->Time(status, "lastReconcileTime", parent);
  return out;
}

}  // namespace nereid::job
