#include "globalmanager/controllers/library_job_status.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/api/json_fields.h"
#include "common/strings/absl_compat.h"

namespace nereid::gm {

using kube::Json;

job::JobStatus ReadEmbeddedLibraryStatus(const Json& object, std::string_view field) {
  const std::string path = absl::StrCat("status.", ToAbsl(field));
  const Json* embedded = kube::FindPath(object, path);
  if (embedded == nullptr || !embedded->is_object()) return {};
  api::FieldReader reader;
  return job::ReadJobStatus(*embedded, path, &reader);
}

std::string_view SednaJobPhase(std::string_view library_phase) {
  if (library_phase == job::phases::kRestarting) return job::phases::kRunning;
  if (library_phase.empty()) return job::phases::kPending;
  return library_phase;
}

void PutLibraryJobCounts(const job::JobStatus& js, Json* status) {
  int64_t active = 0, succeeded = 0, failed = 0;
  for (const auto& [task, rs] : js.replica_statuses) {
    active += rs.active;
    succeeded += rs.succeeded;
    failed += rs.failed;
  }
  if (!js.IsFinished()) {
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
}

void AppendSednaCondition(api::Condition condition, absl::Time now, Json* status) {
  api::FieldReader reader;
  std::vector<api::Condition> list = api::ReadConditions(*status, "status", &reader);
  if (!api::AppendCondition(&list, std::move(condition), now)) return;
  (*status)["conditions"] = api::ConditionsToJson(list);
}

}  // namespace nereid::gm
