#include "common/job/job_status_writer.h"

namespace nereid::job {

using kube::Json;

bool IsJobStatusKey(std::string_view key) {
  for (std::string_view owned :
       {"phase", "conditions", "replicaStatuses", "taskStatus", "taskSummary", "restarts",
        "startTime", "completionTime", "lastReconcileTime"}) {
    if (key == owned) return true;
  }
  return false;
}

void PutJobStatusFields(const Json& status_json, Json* status) {
  if (!status->is_object() || !status_json.is_object()) {
    *status = status_json;
    return;
  }
  for (auto it = status->begin(); it != status->end();) {
    if (IsJobStatusKey(it.key()) && !status_json.contains(it.key())) {
      it = status->erase(it);
    } else {
      ++it;
    }
  }
  for (const auto& [key, value] : status_json.items()) (*status)[key] = value;
}

}  // namespace nereid::job
