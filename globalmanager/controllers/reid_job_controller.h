#pragma once

// ReidJob controller: an offline re-identification worker pod, run as a job by the common job
// library, and the Service "<job>-reid" on port 5000 that Sedna's ReID workers expect (Sedna never
// creates it). Everything but the kind's spec is InferenceJobController's
// (inference_job_controller.h). Its workers' reports are accepted from the nodes the job is on
// and not recorded: Sedna's ReidJob status has no metrics, and its upstream does nothing.

#include <memory>

#include "absl/status/statusor.h"
#include "globalmanager/controllers/controller_context.h"
#include "globalmanager/controllers/gm_controller.h"
#include "globalmanager/controllers/inference_job_controller.h"

namespace nereid::gm {

const InferenceJobKind& ReidJobKind();

// The DefaultRegistry() factory: null (the kind is skipped, with a warning) when the API server
// does not serve reidjobs.sedna.io.
absl::StatusOr<std::unique_ptr<GmController>> MakeReidJobController(ControllerContext& context);

}  // namespace nereid::gm
