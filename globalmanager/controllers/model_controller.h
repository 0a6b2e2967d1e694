#pragma once

// ModelController: sends each Model to the edge nodes that need it and turns the LCs' fetch and
// verification results (spec.sha256 when set) into the Model's status.
//
// Which nodes need a Model (nothing else sends Models; Sedna pushed them only from its IL
// controller):
//   - the needs other controllers declare through ModelRequirements (model_requirements.h), e.g.
//     an IncrementalLearningJob needs its initial and deploy models on its stage nodes;
//   - the nodes listed in the Model's annotation `nereid.io/nodes` ("edge-0,edge-1"), for
//     operators who want a model pre-fetched and verified on nodes before any job uses it.
// The union is upserted (typed ModelSpec, version = generation, edge_objects.h); a node that
// drops out of it gets a Remove; a deleted, being-deleted or invalid Model is removed everywhere
// (invalid: SpecValid=False + Warning Event, spec_validity.h). Needs for a Model that does not
// exist (yet) are kept and take effect when it appears.
//
// S3 (s3_credentials.h): an s3:// Model with credentialName carries its Secret's credential in
// ModelSpec.s3_credential to the nodes it is sent to, with the Secret's resourceVersion in its
// edge version. The Secret is read by Reconcile (every kCredentialRecheckPeriod), never under the
// lock other controllers' requirement calls take; until it is read, or while it is unusable
// (CredentialsForbidden/NotFound/Invalid: SpecValid=False + Warning Event), the Model is sent
// nowhere.
//
// Reports (ReportSink for kind "Model"): a ModelStatus becomes status.verified, status.sha256,
// status.updateTime, reason/message (cleared when verified), observedGeneration and the condition
// Verified=True|False (reason: the LC's, e.g. DigestMismatch, DownloadFailed, PathNotFound;
// NoDigest when the Model has no spec.sha256, so there was nothing to verify against);
// status.metrics (Sedna's, written from FL aggregation reports) and every other field are kept.
// The status describes the latest report of any node; a failure names its node in the message.
// Events: ModelVerified (became verified), VerificationFailed (Warning, a new or changed error;
// none for NoDigest).
// Outcomes as the Dataset controller's: ObjectGone, NotThisNode (the node is not one the Model is
// sent to), Invalid, Retry on API trouble.

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/api/model.h"
#include "common/kube/errors.h"
#include "globalmanager/controllers/controller_context.h"
#include "globalmanager/controllers/edge_placements.h"
#include "globalmanager/controllers/model_requirements.h"
#include "globalmanager/controllers/s3_credentials.h"
#include "globalmanager/controllers/reconciling_controller.h"
#include "globalmanager/controllers/report_router.h"

namespace nereid::gm {

// Comma- (or space-) separated node names that should hold the Model in any case.
inline constexpr std::string_view kModelNodesAnnotation = "nereid.io/nodes";

namespace model_conditions {
inline constexpr std::string_view kVerified = "Verified";  // (and SpecValid, spec_validity.h)
}  // namespace model_conditions

namespace model_reasons {
inline constexpr std::string_view kVerified = "Verified";
inline constexpr std::string_view kNotVerified = "NotVerified";  // verified=false, no reason given
// verified=false because spec.sha256 is not set: nothing to verify against (no Warning Event).
inline constexpr std::string_view kNoDigest = "NoDigest";
// Events.
inline constexpr std::string_view kModelVerified = "ModelVerified";
inline constexpr std::string_view kVerificationFailed = "VerificationFailed";
}  // namespace model_reasons

class ModelController final : public ReconcilingController,
                              public ReportSink,
                              public ModelRequirements {
 public:
  static absl::StatusOr<std::unique_ptr<ModelController>> Create(const ControllerContext& context);
  ~ModelController() override;

  absl::Status PrimeEdge() override;
  ReportOutcome HandleReport(std::string_view node, const edge::v1::StatusReport& report) override;

  // ModelRequirements.
  void SetRequirements(const std::string& requester, const std::vector<ModelNeed>& needs) override;
  void RequireModel(const std::string& model_key, const std::string& node,
                    const std::string& requester) override;
  void ReleaseModel(const std::string& model_key, const std::string& node,
                    const std::string& requester) override;
  void ReleaseAll(const std::string& requester) override;

  // The nodes Model `key` is placed on. For tests and diagnostics.
  std::set<std::string> PlacedNodes(const std::string& key) const;

 private:
  explicit ModelController(const ControllerContext& context);

  absl::StatusOr<kube::ReconcileResult> Reconcile(const std::string& key) override;
  // The spec of `object` when it can be sent; else its problems in `causes`.
  static std::optional<api::ModelSpec> SpecOf(const kube::Json& object,
                                              std::vector<kube::StatusCause>* causes);
  // Reads the credential `spec` (of `object`) names into credentials_ (or erases it); the
  // problem, if any.
  absl::StatusOr<std::optional<CredentialProblem>> RefreshCredential(const kube::Json& object,
                                                                     const api::ModelSpec& spec)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Brings the registry in line with the Model in the cache and the current needs.
  absl::Status Place(const std::string& key);
  absl::Status PlaceLocked(const std::string& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Places every key in `keys` and enqueues it (for a reconcile that also writes status).
  void Changed(const std::set<std::string>& keys) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  kube::SharedInformer* models_ = nullptr;
  mutable absl::Mutex mu_;
  // model key -> node -> requesters.
  std::map<std::string, std::map<std::string, std::set<std::string>>> needs_ ABSL_GUARDED_BY(mu_);
  // requester -> what it needs (to replace or release it all).
  std::map<std::string, std::set<ModelNeed>> by_requester_ ABSL_GUARDED_BY(mu_);
  // model key -> the credential it carries (nullopt: it needs none). A key with a credentialName
  // that is missing here is not placed.
  std::map<std::string, std::optional<SecretCredential>> credentials_ ABSL_GUARDED_BY(mu_);
  S3CredentialReader credential_reader_;
  // Guarded by mu_ too: PlaceLocked decides from needs_ and syncs under one lock.
  EdgePlacements placements_;
};

// The DefaultRegistry entry: always created (the job kinds read Models, so their CRD is part of
// every install, not optional like the workload kinds'), and first: it sets context.models, the
// ModelRequirements the controllers created after it use.
absl::StatusOr<std::unique_ptr<GmController>> MakeModelController(ControllerContext& context);

}  // namespace nereid::gm
