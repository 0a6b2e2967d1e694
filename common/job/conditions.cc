#include "common/job/conditions.h"

#include <algorithm>
#include <string>
#include <vector>

namespace nereid::job {

namespace ct = condition_types;

bool SetCondition(JobStatus* status, std::string_view type, std::string_view condition_status,
                  std::string_view reason, std::string_view message, absl::Time now) {
  if (status->IsFinished()) return false;  // Succeeded and Failed are absorbing.
  std::vector<api::Condition>& conds = status->conditions;
  auto existing = std::find_if(conds.begin(), conds.end(),
                               [&](const api::Condition& c) { return c.type == type; });
  api::Condition next = api::Condition::Of(type, condition_status, reason, message);
  next.last_update_time = now;
  next.last_transition_time = now;
  if (existing != conds.end()) {
    if (existing->status == condition_status && existing->reason == reason) {
      if (existing->message == message) return false;
      existing->message = std::string(message);
      existing->last_update_time = now;
      return true;
    }
    if (existing->status == condition_status) {
      next.last_transition_time = existing->last_transition_time;
    }
    conds.erase(existing);
  }

  const bool is_true = condition_status == kTrue;
  const bool terminal = is_true && (type == ct::kSucceeded || type == ct::kFailed);
  std::vector<api::Condition> kept;
  kept.reserve(conds.size() + 1);
  for (api::Condition& c : conds) {
    if (is_true && type == ct::kRunning && c.type == ct::kRestarting) continue;
    if (is_true && type == ct::kRestarting && c.type == ct::kRunning) continue;
    if (terminal && (c.type == ct::kRunning || c.type == ct::kRestarting) && c.IsTrue()) {
      c.status = std::string(kFalse);
      c.reason = std::string(reason);
      c.message = std::string(message);
      c.last_update_time = now;
      c.last_transition_time = now;
    }
    kept.push_back(std::move(c));
  }
  kept.push_back(std::move(next));
  conds = std::move(kept);
  return true;
}

bool RemoveCondition(JobStatus* status, std::string_view type) {
  if (status->IsFinished()) return false;
  auto& conds = status->conditions;
  auto it = std::remove_if(conds.begin(), conds.end(),
                           [&](const api::Condition& c) { return c.type == type; });
  if (it == conds.end()) return false;
  conds.erase(it, conds.end());
  return true;
}

std::string_view PhaseOf(const JobStatus& status) {
  if (status.IsFailed()) return phases::kFailed;
  if (status.IsSucceeded()) return phases::kSucceeded;
  if (status.IsConditionTrue(ct::kSuspended)) return phases::kSuspended;
  if (status.IsConditionTrue(ct::kRestarting)) return phases::kRestarting;
  if (status.IsConditionTrue(ct::kRunning)) return phases::kRunning;
  return phases::kPending;
}

}  // namespace nereid::job
