#pragma once

// The DistributedJob controller (common/job + distributed_job_controller.h, the job engineer's)
// under the GM's lifecycle: its informers (jobs, owned pods and Services), child lister,
// expectations and gang availability, with the controller's own event handlers. Returns null —
// the controller is skipped with a warning — when the API server does not serve
// distributedjobs.sedna.io (a cluster with only Sedna's CRDs installed).
//
// Not wired yet: the JobPlacementSink (announcing a job's pods to their nodes' LCs). The edge
// protocol has no DistributedJob spec, so the hub could neither send one nor admit worker reports
// about one; see the GM report.

#include <memory>

#include "absl/status/statusor.h"
#include "globalmanager/controllers/controller_context.h"
#include "globalmanager/controllers/gm_controller.h"

namespace nereid::gm {

absl::StatusOr<std::unique_ptr<GmController>> MakeDistributedJobController(
    ControllerContext& context);

}  // namespace nereid::gm
