#include "globalmanager/controllers/spec_validity.h"

#include <optional>
#include <string>

#include "common/api/validation.h"
#include "common/log/log.h"
#include "globalmanager/controllers/controller_events.h"
#include "globalmanager/controllers/status_conditions.h"
#include "globalmanager/controllers/status_writer.h"

namespace nereid::gm {

using kube::Json;

namespace {

// SetStatusCondition on the list at `options.conditions_field`.
bool SetSpecValid(Json* status, std::string_view cond_status, std::string_view reason,
                  std::string_view message, absl::Time now, const SpecValidityOptions& options) {
  const std::string field(options.conditions_field);
  Json holder = Json::object();
  if (status->contains(field)) holder["conditions"] = (*status)[field];
  const bool changed =
      SetStatusCondition(&holder, kSpecValidCondition, cond_status, reason, message, now);
  if (changed) (*status)[field] = std::move(holder["conditions"]);
  return changed;
}

}  // namespace

std::optional<api::Condition> FindSpecValid(const Json& status,
                                            const SpecValidityOptions& options) {
  if (!status.is_object()) return std::nullopt;
  auto list = status.find(std::string(options.conditions_field));
  if (list == status.end()) return std::nullopt;
  return FindStatusCondition(Json{{"conditions", *list}}, kSpecValidCondition);
}

absl::Status RecordSpecInvalid(const ControllerContext& context, const kube::Resource& resource,
                               const kube::ObjectPtr& object,
                               const std::vector<kube::StatusCause>& causes,
                               bool top_level_reason) {
  return RecordSpecInvalid(context, resource, object, kInvalidSpecReason, api::FormatCauses(causes),
                           SpecValidityOptions{.top_level_reason = top_level_reason});
}

absl::Status RecordSpecInvalid(const ControllerContext& context, const kube::Resource& resource,
                               const kube::ObjectPtr& object, std::string_view reason,
                               std::string_view message, const SpecValidityOptions& options) {
  const Json& obj = *object;
  const absl::Time now = context.clock->Now();
  absl::StatusOr<StatusWrite> write = WriteStatus(
      *context.client, resource, kube::Namespace(obj), kube::Name(obj), kube::Uid(obj),
      [&](const Json& current, Json* status) -> absl::Status {
        MarkSpecInvalid(status, reason, message, now, options);
        (*status)["observedGeneration"] = kube::Generation(current);
        return absl::OkStatus();
      },
      object);
  if (!write.ok()) {
    if (absl::IsNotFound(write.status())) return absl::OkStatus();  // Gone meanwhile.
    return write.status();
  }
  AnnounceSpecInvalid(context, resource, *write, reason, message, options);
  return absl::OkStatus();
}

void AnnounceSpecInvalid(const ControllerContext& context, const kube::Resource& resource,
                         const StatusWrite& write, std::string_view reason,
                         std::string_view message, const SpecValidityOptions& options) {
  if (!write.written) return;
  std::optional<api::Condition> before = FindSpecValid(write.before, options);
  if (before.has_value() && before->status == condition_status::kFalse &&
      before->reason == reason && before->message == message) {
    return;  // Said already (a resync, or another field changed).
  }
  LOG(WARNING) << resource.kind << " " << kube::Key(write.object) << ": " << reason << ": "
               << message;
  RecordEvent(context, resource, write.object, kube::EventType::kWarning, reason, message);
}

void MarkSpecInvalid(Json* status, std::string_view reason, std::string_view message,
                     absl::Time now, const SpecValidityOptions& options) {
  SetSpecValid(status, condition_status::kFalse, reason, message, now, options);
  if (options.top_level_reason) {
    (*status)["reason"] = reason;
    (*status)["message"] = message;
  }
}

bool MarkSpecValid(Json* status, absl::Time now, const SpecValidityOptions& options) {
  std::optional<api::Condition> valid = FindSpecValid(*status, options);
  if (!valid.has_value() || valid->status != condition_status::kFalse) return false;
  SetSpecValid(status, condition_status::kTrue, kValidReason, "", now, options);
  if (options.top_level_reason) {
    // Only what the invalid spec set: another problem's reason (a count error...) stays.
    auto reason = status->find("reason");
    if (reason != status->end() && reason->is_string() &&
        reason->get<std::string>() == valid->reason) {
      status->erase("reason");
      status->erase("message");
    }
  }
  return true;
}

absl::Status RecordSpecValid(const ControllerContext& context, const kube::Resource& resource,
                             const kube::ObjectPtr& object, bool top_level_reason) {
  const Json& obj = *object;
  const SpecValidityOptions options{.top_level_reason = top_level_reason};
  const Json* cached_status = kube::FindPath(obj, "status");
  if (cached_status == nullptr ||
      !ConditionIs(*cached_status, kSpecValidCondition, condition_status::kFalse)) {
    return absl::OkStatus();  // Never said otherwise: nothing to write.
  }
  const absl::Time now = context.clock->Now();
  absl::StatusOr<StatusWrite> write = WriteStatus(
      *context.client, resource, kube::Namespace(obj), kube::Name(obj), kube::Uid(obj),
      [&](const Json& current, Json* status) -> absl::Status {
        if (MarkSpecValid(status, now, options)) {
          (*status)["observedGeneration"] = kube::Generation(current);
        }
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
