#include "globalmanager/controllers/dataset_controller.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/api/dataset.h"
#include "common/api/sedna_contract.h"
#include "common/api/validation.h"
#include "common/log/log.h"
#include "common/net/edge_protocol.h"
#include "common/status/macros.h"
#include "common/strings/absl_compat.h"
#include "globalmanager/controllers/edge_dispatcher.h"
#include "globalmanager/controllers/edge_objects.h"
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

void Record(kube::EventRecorder* events, const Json& object, kube::EventType type,
            std::string_view reason, std::string_view message) {
  if (events != nullptr) events->Record(object, type, reason, message);
}

}  // namespace

absl::StatusOr<std::unique_ptr<DatasetController>> DatasetController::Create(
    const ControllerContext& context) {
  if (context.client == nullptr || context.informers == nullptr || context.edge == nullptr) {
    return absl::InvalidArgumentError("DatasetController: client, informers and edge are required");
  }
  std::unique_ptr<DatasetController> controller(new DatasetController(context));
  if (context.reports != nullptr) {
    RETURN_IF_ERROR(context.reports->Register(std::string(kKind), controller.get()));
  }
  return controller;
}

DatasetController::DatasetController(const ControllerContext& context)
    : ReconcilingController("dataset", context) {
  datasets_ = Watch(api::resources::Datasets());
}

// Workers call Reconcile on this object: stop them before the members go away.
DatasetController::~DatasetController() { Stop(); }

std::string DatasetController::PlacedNode(const std::string& key) const {
  absl::MutexLock lock(&mu_);
  auto it = placed_.find(key);
  return it == placed_.end() ? std::string() : it->second.node;
}

std::vector<kube::StatusCause> DatasetController::Problems(const Json& object) {
  // Only the spec decides whether the Dataset can be sent; a malformed status is ours to rewrite.
  Json spec_only = object;
  spec_only.erase("status");
  absl::StatusOr<api::Dataset> dataset = api::Dataset::FromJson(spec_only);
  if (!dataset.ok()) {
    std::vector<kube::StatusCause> causes = kube::Causes(dataset.status());
    if (causes.empty()) causes.push_back({"FieldValueInvalid", std::string(dataset.status().message()), ""});
    return causes;
  }
  return dataset->Validate();
}

absl::Status DatasetController::PrimeEdge() {
  int placed = 0;
  for (const kube::ObjectPtr& object : datasets_->GetLister().List()) {
    if (kube::IsBeingDeleted(*object) || !Problems(*object).empty()) continue;
    RETURN_IF_ERROR(Place(kube::Key(*object), object));
    ++placed;
  }
  LOG(INFO) << "dataset controller: " << placed << " datasets in the edge registry";
  return absl::OkStatus();
}

absl::StatusOr<kube::ReconcileResult> DatasetController::Reconcile(const std::string& key) {
  absl::StatusOr<kube::ObjectPtr> object = datasets_->GetLister().GetByKey(key);
  if (!object.ok()) {
    if (!absl::IsNotFound(object.status())) return object.status();
    RETURN_IF_ERROR(Unplace(key));
    return kube::ReconcileResult{};
  }
  if (kube::IsBeingDeleted(**object)) {
    RETURN_IF_ERROR(Unplace(key));
    return kube::ReconcileResult{};
  }
  std::vector<kube::StatusCause> causes = Problems(**object);
  if (!causes.empty()) {
    // Nothing is sent for an invalid spec; retrying cannot fix it, the user's next edit will.
    RETURN_IF_ERROR(Unplace(key));
    RETURN_IF_ERROR(RecordSpecInvalid(context(), api::resources::Datasets(), *object, causes));
    return kube::ReconcileResult{};
  }
  RETURN_IF_ERROR(Place(key, *object));
  RETURN_IF_ERROR(RecordSpecValid(context(), api::resources::Datasets(), *object));
  return kube::ReconcileResult{};
}

absl::Status DatasetController::Place(const std::string& key, const kube::ObjectPtr& object) {
  const Json& obj = *object;
  const std::string node = kube::StringAt(obj, "spec.nodeName");
  const std::string version = EdgeVersion(obj);
  const std::string uid = kube::Uid(obj);
  std::string moved_from;
  {
    absl::MutexLock lock(&mu_);
    auto it = placed_.find(key);
    if (it != placed_.end() && it->second.node == node && it->second.uid == uid &&
        it->second.version == version) {
      return absl::OkStatus();  // The registry has exactly this already.
    }
    v1::Resource resource;
    *resource.mutable_ref() = EdgeRef(kKind, obj);
    resource.set_version(version);
    v1::DatasetSpec* spec = resource.mutable_dataset();
    spec->set_url(kube::StringAt(obj, "spec.url"));
    spec->set_format(kube::StringAt(obj, "spec.format"));
    spec->set_node_name(node);
    spec->set_credential_name(kube::StringAt(obj, "spec.credentialName"));
    if (it != placed_.end() && it->second.node != node) {
      RETURN_IF_ERROR(context().edge->Remove(it->second.node, it->second.ref));
      moved_from = it->second.node;
    }
    Placement placement{node, uid, version, resource.ref()};
    RETURN_IF_ERROR(context().edge->Upsert(node, std::move(resource)));
    placed_[key] = std::move(placement);
  }
  if (!moved_from.empty()) {
    LOG(INFO) << "dataset " << key << ": moved from node " << moved_from << " to " << node;
    Record(context().events, obj, kube::EventType::kNormal, reasons::kNodeChanged,
           absl::StrCat("spec.nodeName changed from ", moved_from, " to ", node,
                        "; the dataset is now counted on ", node));
  } else {
    LOG(DEBUG) << "dataset " << key << ": sent to node " << node << " (version " << version << ")";
  }
  return absl::OkStatus();
}

absl::Status DatasetController::Unplace(const std::string& key) {
  absl::MutexLock lock(&mu_);
  auto it = placed_.find(key);
  if (it == placed_.end()) return absl::OkStatus();
  RETURN_IF_ERROR(context().edge->Remove(it->second.node, it->second.ref));
  LOG(INFO) << "dataset " << key << ": removed from node " << it->second.node;
  placed_.erase(it);
  return absl::OkStatus();
}

ReportOutcome DatasetController::HandleReport(std::string_view node,
                                              const v1::StatusReport& report) {
  const v1::ObjectRef& ref = report.ref();
  const std::string key = kube::MakeKey(ref.namespace_(), ref.name());
  if (ref.kind() != kKind || !report.has_dataset()) {
    return ReportOutcome::Rejected(
        "Invalid", absl::StrCat("report ", report.seq(), " about ", ref.kind(), " ", key,
                                " does not carry a dataset status"));
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
      [&](const Json& object, Json* status) -> absl::Status {
        const std::string owner = kube::StringAt(object, "spec.nodeName");
        if (owner != node) {
          return absl::FailedPreconditionError(absl::StrCat(
              "dataset ", key, " belongs to node ", owner, ", not to ", ToAbsl(node)));
        }
        if (failed) {
          (*status)["reason"] = reported.error_reason();
          (*status)["message"] = reported.error_message();
          SetStatusCondition(status, conditions::kCounted, condition_status::kFalse,
                             reported.error_reason(), reported.error_message(), now);
        } else {
          (*status)["numberOfSamples"] = reported.number_of_samples();
          (*status)["updateTime"] = kube::FormatTimestamp(counted_at);
          status->erase("reason");
          status->erase("message");
          SetStatusCondition(status, conditions::kCounted, condition_status::kTrue,
                             reasons::kCounted,
                             absl::StrCat("counted by the LocalController on node ", owner), now);
        }
        if (observed_generation.has_value()) (*status)["observedGeneration"] = *observed_generation;
        return absl::OkStatus();
      },
      cached);

  if (!write.ok()) {
    const absl::Status& s = write.status();
    if (absl::IsNotFound(s)) {
      return ReportOutcome::Rejected("ObjectGone", std::string(s.message()));
    }
    if (s.code() == absl::StatusCode::kFailedPrecondition) {
      LOG(WARNING) << "dataset " << key << ": report " << report.seq() << " from node " << node
                   << " refused: " << s.message();
      return ReportOutcome::Rejected("NotThisNode", std::string(s.message()));
    }
    LOG(WARNING) << "dataset " << key << ": report " << report.seq() << " from node " << node
                 << " not written: " << s;
    return ReportOutcome::Retry(kube::IsConflict(s) ? "Conflict" : "ApiError",
                                std::string(s.message()));
  }
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
      Record(context().events, write->object, kube::EventType::kWarning, reasons::kCountFailed,
             absl::StrCat(reported.error_reason(), ": ", reported.error_message()));
    }
  } else if (was_failing) {
    Record(context().events, write->object, kube::EventType::kNormal, reasons::kCountRecovered,
           absl::StrCat(reported.number_of_samples(), " samples counted on node ", ToAbsl(node),
                        " (the earlier error is cleared)"));
  } else if (!before.contains("numberOfSamples")) {
    Record(context().events, write->object, kube::EventType::kNormal, reasons::kSamplesCounted,
           absl::StrCat(reported.number_of_samples(), " samples counted on node ", ToAbsl(node)));
  }
  LOG(DEBUG) << "dataset " << key << ": status from node " << node << " written (report "
             << report.seq() << ")";
  return ReportOutcome::Accepted();
}

}  // namespace nereid::gm
