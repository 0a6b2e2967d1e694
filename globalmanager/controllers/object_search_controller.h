#pragma once

// ObjectSearchController: runs each ObjectSearchService as Sedna does — Deployment
// "<name>-deployment-reidworker" (the reidWorkers DeploymentSpec) + Service "<name>-reidworker" on
// 9378, Deployment "<name>-deployment-userworker" (1 replica) + Service "<name>-userworker" on
// 9379, and one pod "<name>-trackingworker-xxxxx" per trackingWorkers[] entry with
// USERWORKER_URL=<name>-userworker.<ns>:9379 and EDGEMESH_URL=<name>-reidworker.<ns>:9378. Every
// worker gets NAMESPACE, SERVICE_NAME, JOB_NAME, WORKER_NAME ("<type>-<5 chars>") and LC_SERVER
// (Sedna gives the reid workers no env; Nereid gives them the same base env, which they may
// ignore).
// Sync, status, recovery and edge placement are MultiEdgeServiceController's.

#include <memory>

#include "absl/status/statusor.h"
#include "globalmanager/controllers/controller_context.h"
#include "globalmanager/controllers/multi_edge_service.h"

namespace nereid::gm {

class ObjectSearchController final : public MultiEdgeServiceController {
 public:
  static absl::StatusOr<std::unique_ptr<ObjectSearchController>> Create(
      const ControllerContext& context);
  ~ObjectSearchController() override { Stop(); }

 private:
  explicit ObjectSearchController(const ControllerContext& context);
  ServicePlan MakePlan(const kube::Json& object) const override;
};

// The DefaultRegistry entry: null (skipped, logged) when the CRD is not installed.
absl::StatusOr<std::unique_ptr<GmController>> MakeObjectSearchController(
    ControllerContext& context);

}  // namespace nereid::gm
