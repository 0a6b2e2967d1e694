#include "globalmanager/controllers/dataset_controller.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/api/dataset.h"
#include "common/api/sedna_contract.h"
#include "common/api/validation.h"
#include "common/log/log.h"
#include "common/net/edge_protocol.h"
#include "common/net/storage_credential.h"
#include "common/status/macros.h"
#include "common/strings/absl_compat.h"
#include "globalmanager/controllers/controller_events.h"
#include "globalmanager/controllers/edge_dispatcher.h"
#include "globalmanager/controllers/edge_objects.h"
#include "globalmanager/controllers/registry.h"
#include "globalmanager/controllers/spec_validity.h"
#include "globalmanager/controllers/status_conditions.h"
#include "globalmanager/controllers/status_writer.h"

namespace nereid::gm {
namespace {

using kube::Json;
namespace v1 = edge::v1;
namespace reasons = dataset_reasons;
namespace conditions = dataset_conditions;

constexpr std::string_view kKind = api::kinds::kDataset;

void Record(const ControllerContext& context, const Json& object, kube::EventType type,
            std::string_view reason, std::string_view message) {
  RecordEvent(context, api::resources::Datasets(), object, type, reason, message);
}

}  // namespace

absl::StatusOr<std::unique_ptr<DatasetController>> DatasetController::Create(
    const ControllerContext& context) {
  RETURN_IF_ERROR(context.RequireClientInformersEdge("DatasetController"));
  std::unique_ptr<DatasetController> controller(new DatasetController(context));
  RETURN_IF_ERROR(RegisterReportSink(context, kKind, controller.get()));
  return controller;
}

DatasetController::DatasetController(const ControllerContext& context)
    : ReconcilingController("dataset", context),
      credentials_(context),
      placements_(context.edge, "dataset") {
  datasets_ = Watch(api::resources::Datasets());
}

// Workers call Reconcile on this object: stop them before the members go away.
DatasetController::~DatasetController() { Stop(); }

std::string DatasetController::PlacedNode(const std::string& key) const {
  std::set<std::string> nodes = placements_.Nodes(key);
  return nodes.empty() ? std::string() : *nodes.begin();
}

std::optional<api::DatasetSpec> DatasetController::SpecOf(const Json& object,
                                                          std::vector<kube::StatusCause>* causes) {
  std::optional<api::Dataset> dataset = ParseSpec<api::Dataset>(object, causes);
  if (!dataset.has_value() || !causes->empty()) return std::nullopt;
  return std::move(dataset->spec);
}

absl::Status DatasetController::PrimeEdge() {
  int placed = 0;
  for (const kube::ObjectPtr& object : datasets_->GetLister().List()) {
    if (kube::IsBeingDeleted(*object)) continue;
    std::vector<kube::StatusCause> causes;
    std::optional<api::DatasetSpec> spec = SpecOf(*object, &causes);
    if (!spec.has_value()) continue;
    std::optional<CredentialProblem> problem;
    absl::StatusOr<std::optional<SecretCredential>> credential =
        credentials_.ReadFor(kube::Namespace(*object), spec->url, spec->credential_name, &problem);
    if (!credential.ok()) continue;  // Its reconcile reports (or retries) the credential.
    RETURN_IF_ERROR(Place(kube::Key(*object), *object, *spec, *credential));
    ++placed;
  }
  LOG(INFO) << "dataset controller: " << placed << " datasets in the edge registry";
  return absl::OkStatus();
}

absl::StatusOr<kube::ReconcileResult> DatasetController::Reconcile(const std::string& key) {
  ASSIGN_OR_RETURN(const kube::ObjectPtr object,
                   LiveOrForget(datasets_, key, [&] { return placements_.Forget(key); }));
  if (object == nullptr) return kube::ReconcileResult{};
  std::vector<kube::StatusCause> causes;
  std::optional<api::DatasetSpec> spec = SpecOf(*object, &causes);
  if (!spec.has_value()) {
    // Nothing is sent for an invalid spec; retrying cannot fix it, the user's next edit will.
    RETURN_IF_ERROR(placements_.Forget(key));
    RETURN_IF_ERROR(RecordSpecInvalid(context(), api::resources::Datasets(), object, causes));
    return kube::ReconcileResult{};
  }
  std::optional<CredentialProblem> problem;
  absl::StatusOr<std::optional<SecretCredential>> credential =
      credentials_.ReadFor(kube::Namespace(*object), spec->url, spec->credential_name, &problem);
  if (problem.has_value()) {
    // Without a usable credential the node could not count it: nothing is sent (and what was sent
    // is withdrawn, so the node drops the old credential) until the Secret is fixed.
    RETURN_IF_ERROR(placements_.Forget(key));
    RETURN_IF_ERROR(RecordSpecInvalid(context(), api::resources::Datasets(), object,
                                      problem->reason, problem->message));
    return kube::ReconcileResult{.requeue_after = kCredentialRecheckPeriod};
  }
  if (!credential.ok()) return credential.status();
  RETURN_IF_ERROR(Place(key, *object, *spec, *credential));
  RETURN_IF_ERROR(RecordSpecValid(context(), api::resources::Datasets(), object));
  // Secrets are not watched: look at the Secret again later (rotation, deletion).
  if (credential->has_value()) {
    return kube::ReconcileResult{.requeue_after = kCredentialRecheckPeriod};
  }
  return kube::ReconcileResult{};
}

absl::Status DatasetController::Place(const std::string& key, const Json& object,
                                      const api::DatasetSpec& spec,
                                      const std::optional<SecretCredential>& credential) {
  v1::Resource resource;
  *resource.mutable_ref() = EdgeRef(kKind, object);
  resource.set_version(credential.has_value()
                           ? VersionWithCredential(EdgeVersion(object), *credential)
                           : EdgeVersion(object));
  v1::DatasetSpec* edge_spec = resource.mutable_dataset();
  if (credential.has_value()) {
    net::SetS3Credential(credential->credential, edge_spec->mutable_s3_credential());
  }
  edge_spec->set_url(spec.url);
  edge_spec->set_format(spec.format);
  edge_spec->set_node_name(spec.node_name);
  edge_spec->set_credential_name(spec.credential_name);
  EdgeChange change;
  RETURN_IF_ERROR(placements_.Sync(key, resource, {spec.node_name}, &change));
  if (!change.removed.empty()) {
    const std::string& moved_from = change.removed.front();
    LOG(INFO) << "dataset " << key << ": moved from node " << moved_from << " to "
              << spec.node_name;
    Record(context(), object, kube::EventType::kNormal, reasons::kNodeChanged,
           absl::StrCat("spec.nodeName changed from ", moved_from, " to ", spec.node_name,
                        "; the dataset is now counted on ", spec.node_name));
  }
  return absl::OkStatus();
}

ReportOutcome DatasetController::HandleReport(std::string_view node,
                                              const v1::StatusReport& report) {
  const v1::ObjectRef& ref = report.ref();
  const std::string key = kube::MakeKey(ref.namespace_(), ref.name());
  if (ref.kind() != kKind || !report.has_dataset()) {
    return RejectedPayload(report, "a dataset status");
  }
  const v1::DatasetStatus& reported = report.dataset();
  const bool failed = !reported.error_reason().empty();
  const absl::Time now = context().clock->Now();
  const absl::Time counted_at =
      net::FromProtoTime(reported.update_time()).value_or(now);
  const std::optional<int64_t> observed_generation =
      GenerationOfVersion(report.observed_version());

  kube::ObjectPtr cached;
  if (absl::StatusOr<kube::ObjectPtr> hit = datasets_->GetLister().GetByKey(key); hit.ok()) {
    cached = *std::move(hit);
  }
  absl::StatusOr<StatusWrite> write = WriteStatus(
      *context().client, api::resources::Datasets(), ref.namespace_(), ref.name(), ref.uid(),
      // The hub admitted the report: `node` is the one the Dataset is sent to.
      [&](const Json& /*object*/, Json* status) -> absl::Status {
        api::FieldReader lenient;  // A malformed field reads as absent: ours to rewrite.
        api::DatasetStatus typed = api::ReadDatasetStatus(*status, &lenient);
        if (failed) {
          typed.reason = reported.error_reason();
          typed.message = reported.error_message();
          api::SetCondition(&typed.conditions, conditions::kCounted, condition_status::kFalse,
                            reported.error_reason(), reported.error_message(), now);
        } else {
          typed.number_of_samples = reported.number_of_samples();
          typed.update_time = counted_at;
          typed.reason.clear();
          typed.message.clear();
          api::SetCondition(&typed.conditions, conditions::kCounted, condition_status::kTrue,
                            reasons::kCounted,
                            absl::StrCat("counted by the LocalController on node ", ToAbsl(node)), now);
        }
        if (observed_generation.has_value()) typed.observed_generation = observed_generation;
        PutStatusFields(typed.ToJson(),
                        {"numberOfSamples", "updateTime", "reason", "message",
                         "observedGeneration", "conditions"},
                        status);
        return absl::OkStatus();
      },
      cached);

  if (!write.ok()) return ReportWriteFailure("dataset", key, node, report, write.status());
  if (!write->written) return ReportOutcome::Accepted();

  // User-visible transitions.
  const Json& before = write->before;
  std::optional<api::Condition> counted = FindStatusCondition(before, conditions::kCounted);
  const bool was_failing = counted.has_value() && counted->status == condition_status::kFalse;
  if (failed) {
    if (!was_failing || counted->reason != reported.error_reason() ||
        counted->message != reported.error_message()) {
      LOG(WARNING) << "dataset " << key << ": node " << node << " cannot count it: "
                   << reported.error_reason() << ": " << reported.error_message();
      Record(context(), write->object, kube::EventType::kWarning, reasons::kCountFailed,
             absl::StrCat(reported.error_reason(), ": ", reported.error_message()));
    }
  } else if (was_failing) {
    Record(context(), write->object, kube::EventType::kNormal, reasons::kCountRecovered,
           absl::StrCat(reported.number_of_samples(), " samples counted on node ", ToAbsl(node),
                        " (the earlier error is cleared)"));
  } else if (!before.contains("numberOfSamples")) {
    Record(context(), write->object, kube::EventType::kNormal, reasons::kSamplesCounted,
           absl::StrCat(reported.number_of_samples(), " samples counted on node ", ToAbsl(node)));
  }
  LOG(DEBUG) << "dataset " << key << ": status from node " << node << " written (report "
             << report.seq() << ")";
  return ReportOutcome::Accepted();
}

absl::StatusOr<std::unique_ptr<GmController>> MakeDatasetController(ControllerContext& context) {
  return AsGmController(DatasetController::Create(context));
}

}  // namespace nereid::gm
