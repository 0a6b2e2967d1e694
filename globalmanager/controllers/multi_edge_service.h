#pragma once

// MultiEdgeServiceController: the machinery the multi-edge inference service kinds share
// (FeatureExtractionService, ObjectSearchService, ObjectTrackingService — one controller per kind
// derives from it and only says which children its spec asks for, in MakePlan).
//
// Reconcile (level-based, from the informer caches):
//   - the plan: the kind's children, or why there are none. An invalid spec → SpecValid=False
//     reason InvalidSpec with the causes, a Warning Event (once per distinct message), nothing
//     created or changed, no retry. A missing Model → SpecValid=False reason ModelNotFound, phase
//     Pending, a Warning Event; the service is reconciled again when the Model appears. An
//     s3:// Model whose Secret cannot be read → the same with the Secret's reason
//     (CredentialsForbidden/NotFound/Invalid/Unavailable, s3_credentials.h), looked at again
//     after kCredentialRecheckPeriod (Secrets are not watched).
//   - children kept in sync with the spec (owned_children.h; Sedna creates them once and never
//     again): a missing Deployment/Service/pod is created — once the service may have had
//     children, only after a live GET confirms it still exists (owner_liveness.h), so the garbage
//     collector deleting children of a deleted service does not make us recreate them. What we
//     created counts as there until the informers show it (CreatedChildren), so the pass our own
//     status write triggers neither creates it again nor judges it missing; a Deployment or
//     Service whose content hash (kTemplateHashAnnotation) differs from the plan's is updated (a
//     Deployment's replicas too when someone scaled it); a pod whose hash differs, or that Failed
//     or exited, is deleted and created anew; pods of slots the spec no longer has are deleted.
//     Every child carries the service's controller ownerReference. A child with our name that the
//     service does not control is left alone (ChildConflict).
//   - edge: every worker whose template pins it (nodeName, or nodeSelector/required affinity
//     matching edge nodes) is announced to those nodes' LocalControllers as a Worker resource
//     {job kind, job name, worker type, node}, and removed when no longer there.
//   - Models the plan names on edge nodes are required there (ModelRequirements).
//   - status (multi_edge_status.h): phase, active, failed, startTime, observedGeneration,
//     Sedna's condition history (a new entry only when the phase changes, at most 10 with
//     SpecValid). Events: Running, Recovered, WorkerFailed, SuccessfulCreate/Update/Delete,
//     FailedCreate.
//   - deleted: removed from every edge node, Model needs released; the API server's garbage
//     collector deletes the children.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/model.h"
#include "common/kube/errors.h"
#include "globalmanager/controllers/controller_context.h"
#include "globalmanager/controllers/created_children.h"
#include "globalmanager/controllers/model_requirements.h"
#include "globalmanager/controllers/multi_edge_status.h"
#include "globalmanager/controllers/multi_edge_workers.h"
#include "globalmanager/controllers/owned_children.h"
#include "globalmanager/controllers/owner_liveness.h"
#include "globalmanager/controllers/reconciling_controller.h"
#include "globalmanager/controllers/worker_placements.h"
#include "globalmanager/controllers/worker_template.h"
#include "nereid/edge/v1/resources.pb.h"

namespace nereid::gm {

struct ServicePlan {
  enum class Kind { kReady, kInvalid, kWaiting };
  Kind kind = Kind::kReady;
  std::vector<kube::StatusCause> causes;  // kInvalid
  std::string message;                    // kInvalid / kWaiting
  std::string reason;                     // kWaiting: ModelNotFound, or a Secret problem
  ServiceChildren children;
};

class MultiEdgeServiceController : public ReconcilingController {
 public:
  ~MultiEdgeServiceController() override;

  absl::Status PrimeEdge() override;
  // The edge nodes the service `key` has workers announced on (sorted).
  std::vector<std::string> EdgeNodes(const std::string& key) const {
    return placements_.Nodes(key);
  }

 protected:
  struct KindInfo {
    std::string_view kind;              // "FeatureExtractionService"
    const kube::Resource* resource;     // its sedna.io resource
    bool owns_pods = false;             // watches Pods it owns directly
    // Announces the service itself to its workers' nodes (WorkerPlacements), for kinds whose
    // workers report to it through the LC.
    WorkerPlacements::OwnerSpecFn owner_spec = nullptr;
  };
  MultiEdgeServiceController(std::string name, const ControllerContext& context, KindInfo info);

  // What the spec asks for. Runs on a reconcile worker and in PrimeEdge; reads the caches.
  virtual ServicePlan MakePlan(const kube::Json& object) const = 0;

  // --- helpers for MakePlan ---
  // The Model `name` in `ns` from the cache (model_resolver.h); NotFound with the message users
  // see when it does not exist (a plan Waiting(kModelNotFound, message)).
  absl::StatusOr<api::Model> FindModel(std::string_view ns, std::string_view name) const;
  // The edge nodes a template's spec pins its pods to (placement.h); InvalidArgument for a
  // malformed node selection.
  absl::StatusOr<std::vector<std::string>> EdgeNodesOf(const kube::Json& pod_spec) const;
  // An invalid plan from causes or a status carrying them.
  static ServicePlan Invalid(std::vector<kube::StatusCause> causes);
  static ServicePlan Invalid(const absl::Status& status, std::string_view field);
  // A plan waiting for something that does not exist or cannot be read yet.
  static ServicePlan Waiting(std::string_view reason, std::string_view message);

  // ObjectSearchService and ObjectTrackingService: after the node selections of the reid, `user`
  // (ObjectSearchService's user worker; null for ObjectTracking) and tracking templates are checked
  // (joining `causes`, the spec's own problems), the reid Deployment + Service, the user worker's
  // Deployment + Service, then one tracking pod per entry with USERWORKER_URL (when there is a
  // user worker) and EDGEMESH_URL.
  ServicePlan PlanTrackingPipeline(const kube::Json& object, const api::InlineDeploymentSpec& reid,
                                   const api::TemplateWorker* user,
                                   const std::vector<api::TemplateWorker>& tracking,
                                   std::vector<kube::StatusCause> causes) const;

  // Makes the Models' index (ModelNames maps a service to the Model names it references) and
  // reconciles a service again when a Model it names appears, changes or goes.
  absl::Status WatchModels(std::function<std::vector<std::string>(const kube::Json&)> model_names);

  const KindInfo& info() const { return info_; }
  kube::SharedInformer* services() const { return services_; }

 private:
  absl::StatusOr<kube::ReconcileResult> Reconcile(const std::string& key) override;
  absl::Status SyncChildren(const kube::Json& object, const ServiceChildren& children,
                            std::vector<std::string>* problems);
  // One pod per slot of the plan (pods have generated names and cannot be updated in place).
  absl::Status SyncPods(const kube::Json& object, const ServiceChildren& children,
                        OwnedChildSync& sync);
  // Which planned children the cache shows (SyncChildren creates the missing ones).
  ChildPresence Presence(const kube::Json& object, const ServiceChildren& children) const;
  // The live pods of each slot this service controls.
  std::map<std::string, std::vector<kube::ObjectPtr>> PodsBySlot(const kube::Json& object) const;
  ServiceState StateOf(const kube::Json& object, const ServiceChildren& children) const;
  bool HasChildren(const kube::Json& object) const;
  absl::Status Forget(const std::string& key);
  std::string Requester(const std::string& key) const;

  const KindInfo info_;
  // Declaration order is initialization order: each CreatedChildren registers on its informer.
  kube::SharedInformer* services_ = nullptr;
  kube::SharedInformer* deployments_ = nullptr;
  kube::SharedInformer* k8s_services_ = nullptr;
  kube::SharedInformer* pods_ = nullptr;  // Only for kinds that own pods.
  // What we created that those informers may not show yet.
  CreatedChildren created_deployments_;
  CreatedChildren created_services_;
  std::optional<CreatedChildren> created_pods_;  // With pods_.
  kube::SharedInformer* models_ = nullptr;
  kube::SharedInformer* nodes_ = nullptr;
  WorkerPlacements placements_;
};

}  // namespace nereid::gm
