#include "globalmanager/controllers/service_phase_status.h"

#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_join.h"
#include "common/api/common_types.h"
#include "common/api/joint_inference_service.h"
#include "common/api/sedna_contract.h"
#include "common/log/log.h"
#include "globalmanager/controllers/controller_events.h"
#include "globalmanager/controllers/spec_validity.h"
#include "globalmanager/controllers/status_conditions.h"
#include "globalmanager/controllers/status_writer.h"

namespace nereid::gm {
namespace {

using kube::Json;
namespace reasons = service_reasons;

// `status` gets the state, SpecValid and the phase history (see the header).
void ApplyServicePhase(const ServicePhaseState& state, std::string_view spec_reason,
                       std::string_view spec_message, absl::Time now, const Json& current,
                       Json* status) {
  (*status)["phase"] = state.phase;
  (*status)["active"] = state.active;
  (*status)["failed"] = state.failed;
  (*status)["observedGeneration"] = kube::Generation(current);
  if (!status->contains("startTime") || !(*status)["startTime"].is_string()) {
    (*status)["startTime"] = kube::FormatTimestamp(now);
  }
  api::FieldReader reader;
  std::vector<api::Condition> conditions = api::ReadConditions(*status, "status", &reader);
  if (!reader.ok()) conditions.clear();  // Malformed: ours to rewrite.
  std::vector<api::Condition> list;  // SpecValid (at most one) first, then the phase history.
  std::vector<api::Condition> phases;
  for (api::Condition& c : conditions) {
    if (c.type == kSpecValidCondition) {
      list = {std::move(c)};
    } else {
      phases.push_back(std::move(c));
    }
  }
  const api::Condition* spec_valid = api::FindCondition(list, kSpecValidCondition);
  if (!spec_reason.empty()) {
    api::SetCondition(&list, kSpecValidCondition, condition_status::kFalse, spec_reason,
                      spec_message, now);
  } else if (spec_valid != nullptr && spec_valid->status == condition_status::kFalse) {
    api::SetCondition(&list, kSpecValidCondition, condition_status::kTrue, kValidReason, "", now);
  }
  const size_t max_phases = api::kMaxConditions - list.size();
  api::Condition condition;
  condition.type = state.phase;
  condition.reason = state.reason;
  condition.message = state.message;
  api::AppendCondition(&phases, std::move(condition), now, max_phases);
  list.insert(list.end(), std::make_move_iterator(phases.begin()),
              std::make_move_iterator(phases.end()));
  (*status)["conditions"] = api::ConditionsToJson(list);
}

}  // namespace

absl::Status WriteServicePhase(const ControllerContext& context, const kube::Resource& resource,
                               const kube::ObjectPtr& object, const ServicePhaseState& state,
                               std::string_view spec_reason, std::string_view spec_message) {
  const Json& obj = *object;
  const absl::Time now = context.clock->Now();
  absl::StatusOr<StatusWrite> write = WriteStatus(
      *context.client, resource, kube::Namespace(obj), kube::Name(obj), kube::Uid(obj),
      [&](const Json& current, Json* status) -> absl::Status {
        ApplyServicePhase(state, spec_reason, spec_message, now, current, status);
        return absl::OkStatus();
      },
      object);
  if (!write.ok()) {
    if (absl::IsNotFound(write.status())) return absl::OkStatus();  // Gone meanwhile.
    return write.status();
  }
  if (!write->written) return absl::OkStatus();

  if (!spec_reason.empty()) {
    AnnounceSpecInvalid(context, resource, *write, spec_reason, spec_message);
  }
  const std::string old_phase = write->before.value("phase", std::string());
  if (old_phase == state.phase) return absl::OkStatus();
  LOG(INFO) << api::LowerKind(resource.kind) << " " << kube::Key(obj) << ": "
            << (old_phase.empty() ? "-" : old_phase) << " -> " << state.phase << " ("
            << state.reason << ": " << state.message << ")";
  if (state.phase == api::ji_phases::kRunning) {
    RecordEvent(context, resource, write->object, kube::EventType::kNormal,
                old_phase == api::ji_phases::kFailed ? reasons::kRecovered : reasons::kRunning,
                state.message);
  } else if (state.phase == api::ji_phases::kFailed && state.reason == reasons::kWorkerFailed) {
    RecordEvent(context, resource, write->object, kube::EventType::kWarning, reasons::kWorkerFailed,
                state.message);
  }
  return absl::OkStatus();
}

absl::Status WriteNotReadyPhase(const ControllerContext& context, const kube::Resource& resource,
                                const kube::ObjectPtr& object, bool invalid,
                                std::string_view reason, const std::string& message,
                                const std::optional<ServicePhaseState>& children) {
  ServicePhaseState state;
  if (children.has_value()) {
    state = *children;
  } else {
    state.phase = std::string(invalid ? api::ji_phases::kFailed : api::ji_phases::kPending);
    state.reason = std::string(reason);
    state.message = message;
  }
  return WriteServicePhase(context, resource, object, state, reason, message);
}

absl::Status WriteSyncedPhase(const ControllerContext& context, const kube::Resource& resource,
                              const kube::ObjectPtr& object, ServicePhaseState state,
                              const std::vector<std::string>& problems) {
  if (problems.empty()) return WriteServicePhase(context, resource, object, state, "", "");
  const std::string message = absl::StrJoin(problems, "; ");
  if (state.phase != api::ji_phases::kRunning) {
    state.phase = std::string(api::ji_phases::kFailed);
    state.reason = std::string(kInvalidSpecReason);
    state.message = message;
  }
  return WriteServicePhase(context, resource, object, state, kInvalidSpecReason, message);
}

}  // namespace nereid::gm
