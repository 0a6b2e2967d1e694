#include "globalmanager/controllers/spec_validity.h"

#include <optional>

#include "common/api/validation.h"
#include "common/log/log.h"
#include "globalmanager/controllers/status_conditions.h"
#include "globalmanager/controllers/status_writer.h"

namespace nereid::gm {

using kube::Json;

absl::Status RecordSpecInvalid(const ControllerContext& context, const kube::Resource& resource,
                               const kube::ObjectPtr& object,
                               const std::vector<kube::StatusCause>& causes,
                               bool top_level_reason) {
  const Json& obj = *object;
  const std::string message = api::FormatCauses(causes);
  const absl::Time now = context.clock->Now();
  absl::StatusOr<StatusWrite> write = WriteStatus(
      *context.client, resource, kube::Namespace(obj), kube::Name(obj), kube::Uid(obj),
      [&](const Json& current, Json* status) -> absl::Status {
        SetStatusCondition(status, kSpecValidCondition, condition_status::kFalse,
                           kInvalidSpecReason, message, now);
        if (top_level_reason) {
          (*status)["reason"] = kInvalidSpecReason;
          (*status)["message"] = message;
        }
        (*status)["observedGeneration"] = kube::Generation(current);
        return absl::OkStatus();
      },
      object);
  if (!write.ok()) {
    if (absl::IsNotFound(write.status())) return absl::OkStatus();  // Gone meanwhile.
    return write.status();
  }
  if (write->written) {
    LOG(WARNING) << resource.kind << " " << kube::Key(obj) << ": invalid spec: " << message;
    std::optional<api::Condition> before = FindStatusCondition(write->before, kSpecValidCondition);
    if ((!before.has_value() || before->status != condition_status::kFalse ||
         before->message != message) &&
        context.events != nullptr) {
      context.events->Record(write->object, kube::EventType::kWarning, kInvalidSpecReason,
                             message);
    }
  }
  return absl::OkStatus();
}

absl::Status RecordSpecValid(const ControllerContext& context, const kube::Resource& resource,
                             const kube::ObjectPtr& object, bool top_level_reason) {
  const Json& obj = *object;
  const Json* cached_status = kube::FindPath(obj, "status");
  if (cached_status == nullptr ||
      !ConditionIs(*cached_status, kSpecValidCondition, condition_status::kFalse)) {
    return absl::OkStatus();  // Never said otherwise: nothing to write.
  }
  const absl::Time now = context.clock->Now();
  absl::StatusOr<StatusWrite> write = WriteStatus(
      *context.client, resource, kube::Namespace(obj), kube::Name(obj), kube::Uid(obj),
      [&](const Json& current, Json* status) -> absl::Status {
        SetStatusCondition(status, kSpecValidCondition, condition_status::kTrue, kValidReason, "",
                           now);
        if (top_level_reason) {
          auto reason = status->find("reason");
          if (reason != status->end() && *reason == kInvalidSpecReason) {
            status->erase("reason");
            status->erase("message");
          }
        }
        (*status)["observedGeneration"] = kube::Generation(current);
        return absl::OkStatus();
      },
      object);
  if (!write.ok() && !absl::IsNotFound(write.status())) return write.status();
  if (write.ok() && write->written) {
    LOG(INFO) << resource.kind << " " << kube::Key(obj) << ": spec is valid again";
  }
  return absl::OkStatus();
}

}  // namespace nereid::gm
