#pragma once

// ObjectTrackingController: Sedna defines ObjectTrackingService but runs no controller for it
// (objects are accepted and nothing happens). Nereid runs it like the object search service
// without a user worker: Deployment "<name>-deployment-reidworker" (the reidWorkers
// DeploymentSpec) + Service "<name>-reidworker" on 9378, and one pod
// "<name>-trackingworker-xxxxx" per trackingWorkers[] entry with
// EDGEMESH_URL=<name>-reidworker.<ns>:9378. Every worker gets NAMESPACE, SERVICE_NAME,
// JOB_NAME, WORKER_NAME and LC_SERVER. Sync, status, recovery and edge placement are
// MultiEdgeServiceController's.

#include <memory>

#include "absl/status/statusor.h"
#include "globalmanager/controllers/controller_context.h"
#include "globalmanager/controllers/multi_edge_service.h"

namespace nereid::gm {

class ObjectTrackingController final : public MultiEdgeServiceController {
 public:
  static absl::StatusOr<std::unique_ptr<ObjectTrackingController>> Create(
      const ControllerContext& context);
  ~ObjectTrackingController() override { Stop(); }

 private:
  explicit ObjectTrackingController(const ControllerContext& context);
  ServicePlan MakePlan(const kube::Json& object) const override;
};

// The DefaultRegistry entry: null (skipped, logged) when the CRD is not installed.
absl::StatusOr<std::unique_ptr<GmController>> MakeObjectTrackingController(
    ControllerContext& context);

}  // namespace nereid::gm
