#include "globalmanager/controllers/status_conditions.h"

#include <string>
#include <vector>

namespace nereid::gm {

bool SetStatusCondition(kube::Json* status, std::string_view type, std::string_view cond_status,
                        std::string_view reason, std::string_view message, absl::Time now) {
  if (!status->is_object()) *status = kube::Json::object();
  std::vector<api::Condition> conditions = api::ReadOwnConditions(*status);
  if (!api::SetCondition(&conditions, type, cond_status, reason, message, now)) return false;
  (*status)["conditions"] = api::ConditionsToJson(conditions);
  return true;
}

std::optional<api::Condition> FindStatusCondition(const kube::Json& status,
                                                  std::string_view type) {
  std::vector<api::Condition> conditions = api::ReadOwnConditions(status);
  const api::Condition* found = api::FindCondition(conditions, type);
  if (found == nullptr) return std::nullopt;
  return *found;
}

bool ConditionIs(const kube::Json& status, std::string_view type, std::string_view cond_status) {
  std::optional<api::Condition> c = FindStatusCondition(status, type);
  return c.has_value() && c->status == cond_status;
}

}  // namespace nereid::gm
