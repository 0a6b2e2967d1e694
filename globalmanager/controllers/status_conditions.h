#pragma once

// Conditions in a status object, Kubernetes-style: at most one entry per type (so the list is
// bounded by the number of types a controller uses, and capped at api::kMaxConditions anyway).
// For kinds whose CRD keeps Sedna's append-only history (IL/LL stages) use api::AppendCondition.

#include <optional>
#include <string_view>

#include "absl/time/time.h"
#include "common/api/common_types.h"
#include "common/kube/object.h"

namespace nereid::gm {

// Sets the condition of `type` in status["conditions"]:
//   absent                          → appended, lastTransitionTime = lastHeartbeatTime = now
//   other status                    → replaced, lastTransitionTime = lastHeartbeatTime = now
//   same status, other reason/message → updated in place, lastHeartbeatTime = now
//   nothing differs                 → untouched (a level-triggered pass writes nothing)
// Returns whether `status` changed. `status` must be an object (or null, which becomes one).
bool SetStatusCondition(kube::Json* status, std::string_view type, std::string_view cond_status,
                        std::string_view reason, std::string_view message, absl::Time now);

// The condition of `type`, if the status has one.
std::optional<api::Condition> FindStatusCondition(const kube::Json& status, std::string_view type);

// Whether the condition of `type` exists with status "True" / "False".
bool ConditionIs(const kube::Json& status, std::string_view type, std::string_view cond_status);

namespace condition_status {
inline constexpr std::string_view kTrue = "True";
inline constexpr std::string_view kFalse = "False";
}  // namespace condition_status

}  // namespace nereid::gm
