#include "globalmanager/controllers/inference_job_status.h"

#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/api/common_types.h"
#include "common/api/inference_job.h"
#include "common/api/json_fields.h"
#include "common/strings/absl_compat.h"

namespace nereid::gm {
namespace {

using kube::Json;
namespace ct = job::condition_types;
namespace conditions = api::inference_job_conditions;

api::Condition FromJobCondition(std::string_view type, const job::JobCondition& from) {
  api::Condition c;
  c.type = std::string(type);
  c.reason = from.reason;
  c.message = from.message;
  return c;
}

// The Sedna condition the job's current state shows.
std::optional<api::Condition> CurrentCondition(const InferenceJobStatusUpdate& update) {
  if (!update.waiting_for_model.empty()) {
    api::Condition c;
    c.type = std::string(conditions::kWaiting);
    c.reason = std::string(inference_job_reasons::kModelNotFound);
    c.message = update.waiting_for_model;
    return c;
  }
  const job::JobStatus& js = *update.job;
  if (const job::JobCondition* failed = js.FindCondition(ct::kFailed);
      failed != nullptr && failed->IsTrue()) {
    return FromJobCondition(conditions::kFailed, *failed);
  }
  if (const job::JobCondition* done = js.FindCondition(ct::kSucceeded);
      done != nullptr && done->IsTrue()) {
    return FromJobCondition(conditions::kCompleted, *done);
  }
  if (const job::JobCondition* suspended = js.FindCondition(ct::kSuspended);
      suspended != nullptr && suspended->IsTrue()) {
    return FromJobCondition(conditions::kWaiting, *suspended);
  }
  if (const job::JobCondition* restarting = js.FindCondition(ct::kRestarting);
      restarting != nullptr && restarting->IsTrue()) {
    return FromJobCondition(conditions::kRunning, *restarting);
  }
  const job::JobCondition* running = js.FindCondition(ct::kRunning);
  if (running != nullptr && running->IsTrue()) return FromJobCondition(conditions::kRunning, *running);
  if (running != nullptr) return FromJobCondition(conditions::kStarting, *running);
  if (const job::JobCondition* created = js.FindCondition(ct::kCreated)) {
    return FromJobCondition(conditions::kStarting, *created);
  }
  return std::nullopt;
}

std::string_view Phase(const InferenceJobStatusUpdate& update) {
  if (!update.waiting_for_model.empty()) return api::inference_job_phases::kPending;
  std::string_view phase = update.job->phase;
  if (phase == job::phases::kRestarting) return api::inference_job_phases::kRunning;
  if (phase.empty()) return api::inference_job_phases::kPending;
  return phase;  // Pending, Running, Succeeded, Failed, Suspended: the same words.
}

}  // namespace

job::JobStatus ReadInferenceJobLibraryStatus(const Json& object) {
  const std::string path = absl::StrCat("status.", ToAbsl(kInferenceJobStatusField));
  const Json* embedded = kube::FindPath(object, path);
  if (embedded == nullptr || !embedded->is_object()) return {};
  api::FieldReader reader;
  // A malformed embedded status (someone edited it) restarts from what could be read.
  return job::ReadJobStatus(*embedded, path, &reader);
}

void ApplyInferenceJobStatus(const InferenceJobStatusUpdate& update, Json* status) {
  if (!status->is_object()) *status = Json::object();
  (*status)["phase"] = std::string(Phase(update));
  (*status)["observedGeneration"] = update.generation;
  if (update.job != nullptr) {
    const job::JobStatus& js = *update.job;
    int64_t active = 0, succeeded = 0, failed = 0;
    for (const auto& [task, rs] : js.replica_statuses) {
      active += rs.active;
      succeeded += rs.succeeded;
      failed += rs.failed;
    }
    if (!js.IsFinished()) {
      // The library counts Running pods as active; Sedna counts every pod not yet finished.
      for (const auto& [task, phases] : js.task_status) {
        if (auto pending = phases.find("Pending"); pending != phases.end()) {
          active += pending->second;
        }
      }
    }
    (*status)["active"] = active;
    (*status)["succeeded"] = succeeded;
    (*status)["failed"] = failed;
    (*status)["restarts"] = js.restarts;
    if (js.start_time.has_value()) {
      api::PutTime(status, "startTime", js.start_time);
    } else {
      status->erase("startTime");
    }
    if (js.completion_time.has_value()) {
      api::PutTime(status, "completionTime", js.completion_time);
    } else {
      status->erase("completionTime");
    }
    (*status)[std::string(kInferenceJobStatusField)] = js.ToJson();
  } else {
    for (const char* count : {"active", "succeeded", "failed"}) {
      if (!status->contains(count)) (*status)[count] = 0;
    }
  }
  if (std::optional<api::Condition> current = CurrentCondition(update)) {
    api::FieldReader reader;
    std::vector<api::Condition> list = api::ReadConditions(*status, "status", &reader);
    if (api::AppendCondition(&list, *std::move(current), update.now)) {
      Json json = Json::array();
      for (const api::Condition& c : list) json.push_back(c.ToJson());
      (*status)["conditions"] = std::move(json);
    }
  }
}

}  // namespace nereid::gm
