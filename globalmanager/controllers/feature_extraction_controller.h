#pragma once

// FeatureExtractionController: runs each FeatureExtractionService as Deployment
// "<name>-deployment-fe" (worker type fe, replicas from the inline DeploymentSpec — 1 when
// absent, where Sedna's GM crashes) behind Service "<name>-fe" on port 6000, with Sedna's env
// (NAMESPACE, SERVICE_NAME, JOB_NAME, WORKER_NAME, LC_SERVER, MODEL_URL from the Model,
// KAFKA_ENABLED=true with kafkaSupport, DATA_PATH_PREFIX for a host-path model). Everything else — sync, status,
// edge placement — is MultiEdgeServiceController's (multi_edge_service.h). A missing Model →
// SpecValid=False reason ModelNotFound until it appears.
//
// Edge: besides its workers, the service itself is announced (InferenceJobSpec
// feature_extraction_service, worker type fe) to the nodes holding them, so their LCs forward
// the workers' reports and the hub admits them.
//
// Reports (ReportSink for "FeatureExtractionService"): a WorkerReport's ownerInfo (minus
// startTime/updateTime) → status.metrics [{key, value}], the newest report's values, at most
// kMaxServiceMetrics (Sedna's upstream never receives them). Rejected: not a worker report or
// ownerInfo not an object (Invalid), the service gone or re-created (ObjectGone), the node
// holding none of its workers (NotThisNode). API trouble → Retry.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "globalmanager/controllers/controller_context.h"
#include "globalmanager/controllers/multi_edge_service.h"
#include "globalmanager/controllers/report_router.h"

namespace nereid::gm {

// status.metrics holds at most this many entries (the CRD's maxItems).
inline constexpr size_t kMaxServiceMetrics = 64;

class FeatureExtractionController final : public MultiEdgeServiceController, public ReportSink {
 public:
  static absl::StatusOr<std::unique_ptr<FeatureExtractionController>> Create(
      const ControllerContext& context);
  ~FeatureExtractionController() override { Stop(); }

  ReportOutcome HandleReport(std::string_view node, const edge::v1::StatusReport& report) override;

 private:
  explicit FeatureExtractionController(const ControllerContext& context);
  ServicePlan MakePlan(const kube::Json& object) const override;
};

// The DefaultRegistry entry: null (skipped, logged) when the CRD is not installed.
absl::StatusOr<std::unique_ptr<GmController>> MakeFeatureExtractionController(
    ControllerContext& context);

}  // namespace nereid::gm
