#pragma once

// The DistributedJob controller (common/job + distributed_job_controller.h, the job engineer's)
// under the GM's lifecycle: its informers (jobs, owned pods and Services), child lister,
// expectations and gang availability, with the controller's own event handlers. Returns null —
// the controller is skipped with a warning — when the API server does not serve
// distributedjobs.sedna.io (a cluster with only Sedna's CRDs installed).
//
// With an edge hub (context.edge set) the job's edge half is wired too (distributed_job_edge.h):
// a Node informer, the JobPlacementSink announcing each job to its edge nodes' LCs (PrimeEdge puts
// every job into the registry before the hub may remove anything), and the ReportSink for kind
// "DistributedJob" registered with context.reports (worker reports → status.workerReports).

#include <memory>

#include "absl/status/statusor.h"
#include "globalmanager/controllers/controller_context.h"
#include "globalmanager/controllers/gm_controller.h"

namespace nereid::gm {

absl::StatusOr<std::unique_ptr<GmController>> MakeDistributedJobController(
    ControllerContext& context);

}  // namespace nereid::gm
