#pragma once

// JointInferenceController: runs each JointInferenceService as a cloud worker (Deployment +
// Service) and edge worker(s) (Deployment per edge node), tells the edge nodes' LocalControllers
// about it, keeps its status truthful and turns the edge workers' reports into status.metrics
// (Sedna's controllers/jointinference with its weaknesses fixed; the children Sedna's worker
// images expect are listed in joint_inference_workers.h).
//
// Reconcile (level-based, from the informer caches; children in joint_inference_workers.h):
//   - spec parsed and validated (api::JointInferenceService::Validate, the edge template's node
//     selection, the templates' labels and model URLs). A spec that cannot work → status
//     SpecValid=False reason InvalidSpec with the causes, a Warning Event InvalidSpec (once per
//     distinct message), nothing created or changed, no retry; phase Failed when it has no workers.
//   - a referenced Model that does not exist → SpecValid=False reason ModelNotFound, Warning Event,
//     phase Pending, nothing created; the service is reconciled again when the Model appears
//     (Models are watched and mapped back to the services naming them through an index).
//   - children created when missing (deterministic names; AlreadyExists = cache lag, fine), so a
//     deleted child is recreated — after a live GET of the service confirms it still exists, so
//     the garbage collector's deletions racing the service's own do not leave orphans; a
//     Deployment/Service/HPA whose hash annotation differs from what the spec asks for is updated
//     (the Deployment's template rolls out; replicas are restored to the spec unless an HPA owns
//     them); HPAs and per-node edge Deployments no longer asked for are
//     deleted. A child with our name that this service does not control is left alone (Warning
//     Event ChildConflict). The API server refusing a child as invalid is an invalid spec; other
//     API errors retry with backoff (Warning Event FailedCreate).
//   - edge: the JointInferenceServiceSpec goes to every edge node (the template's nodeName, or
//     each node its nodeSelector/affinity selects — placement.h; a template with neither is not
//     announced: its node is unknown until scheduled) with EdgeVersion(object), and removed from
//     nodes no longer used; the edge model is required on those nodes (ModelRequirements).
//   - status (joint_inference_status.h): phase, active, failed, startTime (first reconcile),
//     observedGeneration, and Sedna's condition history (api::AppendCondition: a new entry only
//     when the phase changes, at most 10). Events: Running, Recovered, WorkerFailed, and
//     SuccessfulCreate/SuccessfulUpdate/SuccessfulDelete for children.
//   - deleted: removed from every edge node and its model needs released; the API server's garbage
//     collector deletes the children (controller ownerReferences).
//
// Reports (ReportSink for "JointInferenceService"): a WorkerReport's ownerInfo (minus startTime /
// updateTime) → status.metrics [{key, value}] (Sedna's shape). Rejected: not a worker report or
// ownerInfo not an object (Invalid), the service gone or re-created (ObjectGone: uid differs), the
// node not one of the service's edge nodes (NotThisNode). API trouble → Retry. With several
// per-node edge workers, status.metrics shows the latest report's values.

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/api/joint_inference_service.h"
#include "common/kube/errors.h"
#include "globalmanager/controllers/controller_context.h"
#include "globalmanager/controllers/created_children.h"
#include "globalmanager/controllers/edge_placements.h"
#include "globalmanager/controllers/joint_inference_status.h"
#include "globalmanager/controllers/joint_inference_workers.h"
#include "globalmanager/controllers/owner_liveness.h"
#include "globalmanager/controllers/reconciling_controller.h"
#include "globalmanager/controllers/report_router.h"

namespace nereid::gm {

class JointInferenceController final : public ReconcilingController, public ReportSink {
 public:
  // Watches JointInferenceServices, their Deployments/Services/HPAs, Models and Nodes, and
  // registers for "JointInferenceService" reports (context.reports may be null in tests).
  static absl::StatusOr<std::unique_ptr<JointInferenceController>> Create(
      const ControllerContext& context);
  ~JointInferenceController() override;

  absl::Status PrimeEdge() override;
  ReportOutcome HandleReport(std::string_view node, const edge::v1::StatusReport& report) override;

  // The edge nodes the service `key` is announced to (sorted). For tests and diagnostics.
  std::vector<std::string> EdgeNodes(const std::string& key) const;

 private:
  // What the spec asks for, or why it cannot be had.
  struct Plan {
    enum class Kind { kReady, kInvalid, kWaiting };
    Kind kind = Kind::kReady;
    std::vector<kube::StatusCause> causes;  // kInvalid
    std::string message;                    // kInvalid / kWaiting, for the user
    std::string reason;                     // kWaiting: ModelNotFound, or a Secret problem
    api::JointInferenceService service;
    JiChildren children;
  };
  explicit JointInferenceController(const ControllerContext& context);

  absl::StatusOr<kube::ReconcileResult> Reconcile(const std::string& key) override;
  Plan MakePlan(const kube::Json& object) const;
  // Creates/updates/deletes children (owned_children.h). Problems the user must fix (a child the
  // API server refuses as invalid, a name taken by someone else) go to `problems`; other API
  // errors are returned.
  absl::Status SyncChildren(const kube::Json& object, const JiChildren& children,
                            std::vector<std::string>* problems);
  // Which planned children the cache shows (SyncChildren creates the missing ones).
  ChildPresence Presence(const kube::Json& object, const JiChildren& children) const;
  // The status from the Deployments in the cache for the planned children.
  JiState StateOf(const kube::Json& object, const JiChildren& children) const;
  // Whether the cache has any worker Deployment of this service.
  bool HasWorkers(const kube::Json& object) const;

  // Edge registry: `nodes` should hold the service's spec (and nothing else should).
  absl::Status Place(const std::string& key, const kube::Json& object,
                     const api::JointInferenceService& service,
                     const std::vector<std::string>& nodes);
  absl::Status Forget(const std::string& key);

  void Record(const kube::Json& object, kube::EventType type, std::string_view reason,
              std::string_view message) const;
  void EnqueueModelReferrers(const kube::Json& model);
  void EnqueueSelectingServices();

  kube::SharedInformer* services_ = nullptr;
  kube::SharedInformer* deployments_ = nullptr;
  kube::SharedInformer* k8s_services_ = nullptr;
  kube::SharedInformer* hpas_ = nullptr;
  // What we created that those informers may not show yet.
  CreatedChildren created_deployments_;
  CreatedChildren created_services_;
  CreatedChildren created_hpas_;
  kube::SharedInformer* models_ = nullptr;
  kube::SharedInformer* nodes_ = nullptr;
  EdgePlacements placements_;
};

// The DefaultRegistry entry: the controller, or null (skipped, logged) when the API server does not
// serve jointinferenceservices.sedna.io (its CRD is not installed), so a cluster without it still
// gets a GM whose caches sync.
absl::StatusOr<std::unique_ptr<GmController>> MakeJointInferenceController(
    ControllerContext& context);

}  // namespace nereid::gm
