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

#include <string_view>

#include "absl/status/status.h"
#include "common/kube/object.h"
#include "common/kube/resource.h"
#include "globalmanager/controllers/controller_context.h"
#include "globalmanager/controllers/joint_inference_status.h"

namespace nereid::gm {

absl::Status WriteServicePhase(const ControllerContext& context, const kube::Resource& resource,
                               const kube::ObjectPtr& object, const ServicePhaseState& state,
                               std::string_view spec_reason, std::string_view spec_message);

}  // namespace nereid::gm
