#include "globalmanager/controllers/status_conditions.h"

#include <string>
#include <vector>

#include "common/api/json_fields.h"

namespace nereid::gm {
namespace {

std::vector<api::Condition> Read(const kube::Json& status) {
  if (!status.is_object()) return {};
  api::FieldReader reader;  // Malformed entries are skipped, not fatal: we rewrite the list.
  std::vector<api::Condition> conditions = api::ReadConditions(status, "status", &reader);
  std::erase_if(conditions, [](const api::Condition& c) { return c.type.empty(); });
  return conditions;
}

}  // namespace

bool SetStatusCondition(kube::Json* status, std::string_view type, std::string_view cond_status,
                        std::string_view reason, std::string_view message, absl::Time now) {
  if (!status->is_object()) *status = kube::Json::object();
  std::vector<api::Condition> conditions = Read(*status);
  bool changed = false;
  auto it = std::find_if(conditions.begin(), conditions.end(),
                         [&](const api::Condition& c) { return c.type == type; });
  if (it == conditions.end() || it->status != cond_status) {
    api::Condition condition;
    condition.type = std::string(type);
    condition.status = std::string(cond_status);
    condition.reason = std::string(reason);
    condition.message = std::string(message);
    condition.last_transition_time = now;
    condition.last_heartbeat_time = now;
    if (it == conditions.end()) {
      conditions.push_back(std::move(condition));
    } else {
      *it = std::move(condition);
    }
    changed = true;
  } else if (it->reason != reason || it->message != message) {
    it->reason = std::string(reason);
    it->message = std::string(message);
    it->last_heartbeat_time = now;
    changed = true;
  }
  if (!changed) return false;
  while (conditions.size() > api::kMaxConditions) conditions.erase(conditions.begin());
  kube::Json list = kube::Json::array();
  for (const api::Condition& c : conditions) list.push_back(c.ToJson());
  (*status)["conditions"] = std::move(list);
  return true;
}

std::optional<api::Condition> FindStatusCondition(const kube::Json& status,
                                                  std::string_view type) {
  for (api::Condition& c : Read(status)) {
    if (c.type == type) return std::move(c);
  }
  return std::nullopt;
}

bool ConditionIs(const kube::Json& status, std::string_view type, std::string_view cond_status) {
  std::optional<api::Condition> c = FindStatusCondition(status, type);
  return c.has_value() && c->status == cond_status;
}

}  // namespace nereid::gm
