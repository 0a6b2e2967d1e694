#pragma once

// VideoAnalyticsJob controller: a detection worker pod with the job's Model (MODEL_NAME,
// MODEL_URL) behind the Service "<job>-videoanalytics" on port 4000, run as a job by the common
// job library; the workers' reports become status.metrics. Everything but the kind's spec is
// InferenceJobController's (inference_job_controller.h).

#include <memory>

#include "absl/status/statusor.h"
#include "globalmanager/controllers/controller_context.h"
#include "globalmanager/controllers/gm_controller.h"
#include "globalmanager/controllers/inference_job_controller.h"

namespace nereid::gm {

const InferenceJobKind& VideoAnalyticsJobKind();

// The DefaultRegistry() factory: null (the kind is skipped, with a warning) when the API server
// does not serve videoanalyticsjobs.sedna.io.
absl::StatusOr<std::unique_ptr<GmController>> MakeVideoAnalyticsController(
    ControllerContext& context);

}  // namespace nereid::gm
