#pragma once

// The controllers of the two multi-edge kinds that run a tracking pipeline, one class template
// parameterised by the kind's api struct (the kinds differ only in the user worker); the plan is
// MultiEdgeServiceController::PlanTrackingPipeline, and sync, status, recovery and edge placement
// are MultiEdgeServiceController's.
//
// ObjectSearchController: each ObjectSearchService as Sedna runs it — Deployment
// "<name>-deployment-reidworker" (the reidWorkers DeploymentSpec) + Service "<name>-reidworker" on
// 9378, Deployment "<name>-deployment-userworker" (1 replica) + Service "<name>-userworker" on
// 9379, and one pod "<name>-trackingworker-xxxxx" per trackingWorkers[] entry with
// USERWORKER_URL=<name>-userworker.<ns>:9379 and EDGEMESH_URL=<name>-reidworker.<ns>:9378.
//
// ObjectTrackingController: Sedna defines ObjectTrackingService but runs no controller for it
// (objects are accepted and nothing happens). Nereid runs it like the object search service
// without a user worker: the reid Deployment + Service, and one tracking pod per
// trackingWorkers[] entry with EDGEMESH_URL.
//
// Every worker gets NAMESPACE, SERVICE_NAME, JOB_NAME, WORKER_NAME ("<type>-<5 chars>") and
// LC_SERVER (Sedna gives the reid workers no env; Nereid gives them the same base env, which they
// may ignore).

#include <memory>

#include "absl/status/statusor.h"
#include "common/api/object_search_service.h"
#include "common/api/object_tracking_service.h"
#include "globalmanager/controllers/controller_context.h"
#include "globalmanager/controllers/gm_controller.h"
#include "globalmanager/controllers/multi_edge_service.h"

namespace nereid::gm {

template <typename Service>
class TrackingPipelineController final : public MultiEdgeServiceController {
 public:
  static absl::StatusOr<std::unique_ptr<TrackingPipelineController>> Create(
      const ControllerContext& context);
  ~TrackingPipelineController() override { Stop(); }

 private:
  explicit TrackingPipelineController(const ControllerContext& context);
  ServicePlan MakePlan(const kube::Json& object) const override;
};

using ObjectSearchController = TrackingPipelineController<api::ObjectSearchService>;
using ObjectTrackingController = TrackingPipelineController<api::ObjectTrackingService>;
extern template class TrackingPipelineController<api::ObjectSearchService>;
extern template class TrackingPipelineController<api::ObjectTrackingService>;

// The DefaultRegistry entries: null (skipped, logged) when the kind's CRD is not installed.
absl::StatusOr<std::unique_ptr<GmController>> MakeObjectSearchController(
    ControllerContext& context);
absl::StatusOr<std::unique_ptr<GmController>> MakeObjectTrackingController(
    ControllerContext& context);

}  // namespace nereid::gm
