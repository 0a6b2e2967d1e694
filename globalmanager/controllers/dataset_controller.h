#pragma once

// DatasetController: sends each Dataset to the LocalController of its spec.nodeName and turns the
// LC's counts into the Dataset's status (Sedna's controllers/dataset, with
// its weaknesses fixed).
//
// Downstream (level-triggered from the informer cache; Reconcile never blocks on a stream):
//   valid Dataset with nodeName N      → EdgeDispatcher::Upsert(N, DatasetSpec), version =
//                                        metadata.generation (edge_objects.h: status writes do not
//                                        resend the spec)
//   nodeName changed N → M             → Remove from N, Upsert to M, Event NodeChanged
//   deleted / being deleted            → Remove from its node
//   invalid spec (api::Dataset::Validate, or fields of the wrong type)
//                                      → removed from any node, nothing sent; status condition
//                                        SpecValid=False reason InvalidSpec with the causes,
//                                        status.reason/message, Warning Event InvalidSpec; no retry
//                                        (fixed when the user edits the spec: SpecValid=True)
// S3 (s3_credentials.h): an s3:// Dataset with credentialName carries the Secret's credential in
// DatasetSpec.s3_credential to its node only, its edge version folds in the Secret's
// resourceVersion, and it is re-read every kCredentialRecheckPeriod; an unusable Secret
// (CredentialsForbidden/NotFound/Invalid) is reported like an invalid spec and nothing is sent.
// The node each Dataset was placed on is remembered (key → node), so a move or a delete removes it
// from the right node; after a GM restart the hub's resync removes what the registry no longer has.
//
// Upstream (ReportSink for kind "Dataset", on a report worker): a DatasetStatus report becomes,
// through the status subresource (RetryOnConflict, written only when something changed):
//   count  → status.numberOfSamples, status.updateTime (when the LC counted), reason/message
//            cleared, condition Counted=True, observedGeneration = the generation the LC counted
//   error  → status.reason/message = the LC's (e.g. UnknownFormat, PathNotFound), condition
//            Counted=False with them; numberOfSamples keeps the last good count (the ERROR printer
//            column says it is stale) and updateTime is left alone
// Events: SamplesCounted (the first count), CountFailed (an error appeared or changed, Warning),
// CountRecovered (a count after an error).
// Outcomes: the object is gone or was re-created (uid differs) → Rejected ObjectGone; the report's
// node is not spec.nodeName → Rejected NotThisNode (the hub already refuses these; double-checked);
// not a dataset payload → Rejected Invalid; API trouble or conflicts beyond the retries → Retry.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/dataset.h"
#include "common/kube/errors.h"
#include "globalmanager/controllers/controller_context.h"
#include "globalmanager/controllers/edge_placements.h"
#include "globalmanager/controllers/reconciling_controller.h"
#include "globalmanager/controllers/report_router.h"
#include "globalmanager/controllers/s3_credentials.h"

namespace nereid::gm {

namespace dataset_conditions {
inline constexpr std::string_view kCounted = "Counted";  // (and SpecValid, spec_validity.h)
}  // namespace dataset_conditions

namespace dataset_reasons {
inline constexpr std::string_view kCounted = "Counted";
// Events.
inline constexpr std::string_view kNodeChanged = "NodeChanged";
inline constexpr std::string_view kSamplesCounted = "SamplesCounted";
inline constexpr std::string_view kCountFailed = "CountFailed";
inline constexpr std::string_view kCountRecovered = "CountRecovered";
}  // namespace dataset_reasons

class DatasetController final : public ReconcilingController, public ReportSink {
 public:
  // Watches datasets and registers for "Dataset" reports (context.reports may be null in tests
  // that call HandleReport directly).
  static absl::StatusOr<std::unique_ptr<DatasetController>> Create(const ControllerContext& context);
  ~DatasetController() override;

  absl::Status PrimeEdge() override;
  ReportOutcome HandleReport(std::string_view node, const edge::v1::StatusReport& report) override;

  // The node the Dataset `key` is placed on ("" when none). For tests and diagnostics.
  std::string PlacedNode(const std::string& key) const;

 private:
  explicit DatasetController(const ControllerContext& context);

  absl::StatusOr<kube::ReconcileResult> Reconcile(const std::string& key) override;
  // The spec of `object` when it can be sent; else its problems (type errors and Validate()) in
  // `causes`.
  static std::optional<api::DatasetSpec> SpecOf(const kube::Json& object,
                                                std::vector<kube::StatusCause>* causes);
  // Upserts the valid `object` to its node (moving it if it was elsewhere), with the S3
  // credential its credentialName names when it has one.
  absl::Status Place(const std::string& key, const kube::Json& object,
                     const api::DatasetSpec& spec,
                     const std::optional<SecretCredential>& credential);

  kube::SharedInformer* datasets_ = nullptr;
  S3CredentialReader credentials_;
  EdgePlacements placements_;
};

// The DefaultRegistry entry: always created (the job kinds read Datasets, so their CRD is part
// of every install, not optional like the workload kinds').
absl::StatusOr<std::unique_ptr<GmController>> MakeDatasetController(ControllerContext& context);

}  // namespace nereid::gm
