#pragma once

// WriteServicePhase: the status write of the long-running service kinds (JointInferenceService and
// the multi-edge services FeatureExtractionService, ObjectSearchService, ObjectTrackingService).
//
// status: phase, active, failed, observedGeneration, startTime (first write only), and Sedna's
// condition history — the SpecValid condition first (one entry), then one entry per phase change
// (newest last: Sedna's readers look at the last condition), together at most api::kMaxConditions
// (the CRDs' maxItems, or the API server would refuse every status write). A non-empty
// `spec_reason` sets SpecValid=False with `spec_message`; an empty one turns a False into True.
//
// After a write that changed something: the SpecValid Warning when it is news
// (AnnounceSpecInvalid), and on a phase change a log line and the Events Running, Recovered (from
// Failed) or WorkerFailed. An object that is gone meanwhile is not an error.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "common/kube/object.h"
#include "common/kube/resource.h"
#include "globalmanager/controllers/controller_context.h"
#include "globalmanager/controllers/joint_inference_status.h"

namespace nereid::gm {

// The phase reasons of the long-running service kinds: conditions (status.conditions[].reason)
// and Events.
namespace service_reasons {
inline constexpr std::string_view kWorkersAvailable = "WorkersAvailable";
inline constexpr std::string_view kWorkersNotAvailable = "WorkersNotAvailable";
inline constexpr std::string_view kWorkerFailed = "WorkerFailed";
// Events only.
inline constexpr std::string_view kRunning = "Running";
inline constexpr std::string_view kRecovered = "Recovered";
}  // namespace service_reasons

absl::Status WriteServicePhase(const ControllerContext& context, const kube::Resource& resource,
                               const kube::ObjectPtr& object, const ServicePhaseState& state,
                               std::string_view spec_reason, std::string_view spec_message);

// The phase write of a service whose spec cannot run now (`invalid`, or waiting: `reason` says
// for what). Nothing is created or changed, so a service with children from an earlier valid spec
// shows what they do (`children`); one without is Failed (invalid) or Pending, with `reason` and
// `message`. SpecValid gets the same reason and message.
absl::Status WriteNotReadyPhase(const ControllerContext& context, const kube::Resource& resource,
                                const kube::ObjectPtr& object, bool invalid,
                                std::string_view reason, const std::string& message,
                                const std::optional<ServicePhaseState>& children);

// The phase write after the children were synced into `state`: `problems` (children that cannot be
// had as the spec says: the user must act) make SpecValid False with them and, unless the service
// runs anyway, the phase Failed/InvalidSpec.
absl::Status WriteSyncedPhase(const ControllerContext& context, const kube::Resource& resource,
                              const kube::ObjectPtr& object, ServicePhaseState state,
                              const std::vector<std::string>& problems);

}  // namespace nereid::gm
