#include "globalmanager/controllers/inference_job_status.h"

#include <optional>
#include <utility>
#include <vector>

#include "common/api/common_types.h"
#include "common/api/inference_job.h"
#include "globalmanager/controllers/library_job_status.h"
#include "globalmanager/controllers/spec_validity.h"

namespace nereid::gm {
namespace {

using kube::Json;
namespace ct = job::condition_types;
namespace conditions = api::inference_job_conditions;

api::Condition FromJobCondition(std::string_view type, const api::Condition& from) {
  api::Condition c;
  c.type = std::string(type);
  c.reason = from.reason;
  c.message = from.message;
  return c;
}

// The Sedna condition the job's current state shows.
std::optional<api::Condition> CurrentCondition(const InferenceJobStatusUpdate& update) {
  if (!update.waiting_for_model.empty()) return std::nullopt;  // SpecValid says it.
  const job::JobStatus& js = *update.job;
  if (const api::Condition* failed = js.FindCondition(ct::kFailed);
      failed != nullptr && failed->IsTrue()) {
    return FromJobCondition(conditions::kFailed, *failed);
  }
  if (const api::Condition* done = js.FindCondition(ct::kSucceeded);
      done != nullptr && done->IsTrue()) {
    return FromJobCondition(conditions::kCompleted, *done);
  }
  if (const api::Condition* suspended = js.FindCondition(ct::kSuspended);
      suspended != nullptr && suspended->IsTrue()) {
    return FromJobCondition(conditions::kWaiting, *suspended);
  }
  if (const api::Condition* restarting = js.FindCondition(ct::kRestarting);
      restarting != nullptr && restarting->IsTrue()) {
    return FromJobCondition(conditions::kRunning, *restarting);
  }
  const api::Condition* running = js.FindCondition(ct::kRunning);
  if (running != nullptr && running->IsTrue()) return FromJobCondition(conditions::kRunning, *running);
  if (running != nullptr) return FromJobCondition(conditions::kStarting, *running);
  if (const api::Condition* created = js.FindCondition(ct::kCreated)) {
    return FromJobCondition(conditions::kStarting, *created);
  }
  return std::nullopt;
}

std::string_view Phase(const InferenceJobStatusUpdate& update) {
  if (!update.waiting_for_model.empty()) return api::inference_job_phases::kPending;
  return SednaJobPhase(update.job->phase);
}

}  // namespace

job::JobStatus ReadInferenceJobLibraryStatus(const Json& object) {
  return ReadEmbeddedLibraryStatus(object, kInferenceJobStatusField);
}

void ApplyInferenceJobStatus(const InferenceJobStatusUpdate& update, Json* status) {
  if (!status->is_object()) *status = Json::object();
  (*status)["phase"] = std::string(Phase(update));
  (*status)["observedGeneration"] = update.generation;
  if (update.job != nullptr) {
    PutLibraryJobCounts(*update.job, status);
    (*status)[std::string(kInferenceJobStatusField)] = update.job->ToJson();
  } else {
    for (const char* count : {"active", "succeeded", "failed"}) {
      if (!status->contains(count)) (*status)[count] = 0;
    }
  }
  if (!update.waiting_for_model.empty()) {
    MarkSpecInvalid(status, update.waiting_reason, update.waiting_for_model, update.now);
  }
  if (std::optional<api::Condition> current = CurrentCondition(update)) {
    AppendSednaCondition(*std::move(current), update.now, status);
  }
}

}  // namespace nereid::gm
