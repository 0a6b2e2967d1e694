#pragma once

// How every GM controller reports an invalid spec (issue 4 §2: "a condition with reason and
// message, an Event, and no children — never a crash or a retry storm"):
//   RecordSpecInvalid → condition SpecValid=False reason InvalidSpec with the causes as message,
//                       status.reason/status.message the same, observedGeneration, and a Warning
//                       Event InvalidSpec when this is news (not on every resync);
//   RecordSpecValid   → once the user fixed it: SpecValid=True, the InvalidSpec reason/message
//                       cleared. Writes nothing for an object that was never invalid.
// Both go through the status subresource with conflict retries; an object that vanished
// meanwhile is not an error. Kinds whose status has no top-level reason/message pass
// `top_level_reason = false`.

#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "common/kube/errors.h"
#include "common/kube/object.h"
#include "common/kube/resource.h"
#include "globalmanager/controllers/controller_context.h"

namespace nereid::gm {

inline constexpr std::string_view kSpecValidCondition = "SpecValid";
inline constexpr std::string_view kInvalidSpecReason = "InvalidSpec";
inline constexpr std::string_view kValidReason = "Valid";

absl::Status RecordSpecInvalid(const ControllerContext& context, const kube::Resource& resource,
                               const kube::ObjectPtr& object,
                               const std::vector<kube::StatusCause>& causes,
                               bool top_level_reason = true);
absl::Status RecordSpecValid(const ControllerContext& context, const kube::Resource& resource,
                             const kube::ObjectPtr& object, bool top_level_reason = true);

}  // namespace nereid::gm
