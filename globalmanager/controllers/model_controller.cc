#include "globalmanager/controllers/model_controller.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/api/model.h"
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
namespace reasons = model_reasons;
namespace conditions = model_conditions;

constexpr std::string_view kKind = api::kinds::kModel;

std::vector<std::string> AnnotatedNodes(const Json& object) {
  std::vector<std::string> nodes;
  std::optional<std::string> value = kube::Annotation(object, kModelNodesAnnotation);
  if (!value.has_value()) return nodes;
  for (absl::string_view part : absl::StrSplit(*value, absl::ByAnyChar(", \t\n"), absl::SkipEmpty())) {
    nodes.emplace_back(part);
  }
  return nodes;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ModelController>> ModelController::Create(
    const ControllerContext& context) {
  if (context.client == nullptr || context.informers == nullptr || context.edge == nullptr) {
    return absl::InvalidArgumentError("ModelController: client, informers and edge are required");
  }
  std::unique_ptr<ModelController> controller(new ModelController(context));
  if (context.reports != nullptr) {
    RETURN_IF_ERROR(context.reports->Register(std::string(kKind), controller.get()));
  }
  return controller;
}

ModelController::ModelController(const ControllerContext& context)
    : ReconcilingController("model", context) {
  models_ = Watch(api::resources::Models());
}

ModelController::~ModelController() { Stop(); }

std::set<std::string> ModelController::PlacedNodes(const std::string& key) const {
  absl::MutexLock lock(&mu_);
  auto it = placed_.find(key);
  return it == placed_.end() ? std::set<std::string>() : it->second.nodes;
}

std::vector<kube::StatusCause> ModelController::Problems(const Json& object) {
  Json spec_only = object;
  spec_only.erase("status");
  absl::StatusOr<api::Model> model = api::Model::FromJson(spec_only);
  std::vector<kube::StatusCause> causes;
  if (!model.ok()) {
    causes = kube::Causes(model.status());
    if (causes.empty()) {
      causes.push_back({"FieldValueInvalid", std::string(model.status().message()), ""});
    }
    return causes;
  }
  causes = model->Validate();
  for (const std::string& node : AnnotatedNodes(object)) {
    if (!api::IsDnsSubdomain(node)) {
      api::AddInvalid(absl::StrCat("metadata.annotations[", ToAbsl(kModelNodesAnnotation), "]"),
                      absl::StrCat("\"", node, "\" is not a valid node name"), &causes);
    }
  }
  return causes;
}

// ---------------------------------------------------------------------------------------------
// Requirements

void ModelController::SetRequirements(const std::string& requester,
                                      const std::vector<ModelNeed>& needs) {
  const std::set<ModelNeed> wanted(needs.begin(), needs.end());
  absl::MutexLock lock(&mu_);
  std::set<ModelNeed>& current = by_requester_[requester];
  if (current == wanted) {
    if (wanted.empty()) by_requester_.erase(requester);
    return;
  }
  std::set<std::string> touched;
  for (const ModelNeed& need : current) {
    if (wanted.contains(need)) continue;
    auto model = needs_.find(need.model_key);
    if (model != needs_.end()) {
      auto node = model->second.find(need.node);
      if (node != model->second.end()) {
        node->second.erase(requester);
        if (node->second.empty()) model->second.erase(node);
      }
      if (model->second.empty()) needs_.erase(model);
    }
    touched.insert(need.model_key);
  }
  for (const ModelNeed& need : wanted) {
    if (current.contains(need)) continue;
    needs_[need.model_key][need.node].insert(requester);
    touched.insert(need.model_key);
  }
  if (wanted.empty()) {
    by_requester_.erase(requester);
  } else {
    current = wanted;
  }
  Changed(touched);
}

void ModelController::RequireModel(const std::string& model_key, const std::string& node,
                                   const std::string& requester) {
  std::vector<ModelNeed> needs;
  {
    absl::MutexLock lock(&mu_);
    auto it = by_requester_.find(requester);
    if (it != by_requester_.end()) needs.assign(it->second.begin(), it->second.end());
  }
  needs.push_back({model_key, node});
  SetRequirements(requester, needs);
}

void ModelController::ReleaseModel(const std::string& model_key, const std::string& node,
                                   const std::string& requester) {
  std::vector<ModelNeed> needs;
  {
    absl::MutexLock lock(&mu_);
    auto it = by_requester_.find(requester);
    if (it == by_requester_.end()) return;
    for (const ModelNeed& need : it->second) {
      if (need.model_key != model_key || need.node != node) needs.push_back(need);
    }
  }
  SetRequirements(requester, needs);
}

void ModelController::ReleaseAll(const std::string& requester) { SetRequirements(requester, {}); }

void ModelController::Changed(const std::set<std::string>& keys) {
  for (const std::string& key : keys) {
    if (absl::Status s = PlaceLocked(key); !s.ok()) {
      LOG(ERROR) << "model " << key << ": cannot update the edge registry: " << s;
    }
    Enqueue(key);
  }
}

// ---------------------------------------------------------------------------------------------
// Edge registry

absl::Status ModelController::PrimeEdge() {
  absl::MutexLock lock(&mu_);
  for (const kube::ObjectPtr& object : models_->GetLister().List()) {
    RETURN_IF_ERROR(PlaceLocked(kube::Key(*object)));
  }
  // Needs declared before the cache synced for Models that exist only now.
  for (const auto& [key, nodes] : needs_) RETURN_IF_ERROR(PlaceLocked(key));
  LOG(INFO) << "model controller: " << placed_.size() << " models in the edge registry";
  return absl::OkStatus();
}

absl::Status ModelController::Place(const std::string& key) {
  absl::MutexLock lock(&mu_);
  return PlaceLocked(key);
}

absl::Status ModelController::PlaceLocked(const std::string& key) {
  // What the registry should have: the Model (if it exists, is valid and not being deleted) on the
  // union of the needed and annotated nodes.
  kube::ObjectPtr object;
  if (absl::StatusOr<kube::ObjectPtr> hit = models_->GetLister().GetByKey(key); hit.ok()) {
    object = *std::move(hit);
  } else if (!absl::IsNotFound(hit.status())) {
    return hit.status();
  }
  std::set<std::string> nodes;
  std::optional<v1::Resource> resource;
  if (object != nullptr && !kube::IsBeingDeleted(*object) && Problems(*object).empty()) {
    const Json& obj = *object;
    if (auto it = needs_.find(key); it != needs_.end()) {
      for (const auto& [node, requesters] : it->second) nodes.insert(node);
    }
    for (std::string& node : AnnotatedNodes(obj)) nodes.insert(std::move(node));
    resource.emplace();
    *resource->mutable_ref() = EdgeRef(kKind, obj);
    resource->set_version(EdgeVersion(obj));
    v1::ModelSpec* spec = resource->mutable_model();
    spec->set_url(kube::StringAt(obj, "spec.url"));
    spec->set_format(kube::StringAt(obj, "spec.format"));
    spec->set_sha256(absl::AsciiStrToLower(kube::StringAt(obj, "spec.sha256")));
    if (const Json* socs = kube::FindPath(obj, "spec.device_soc_versions");
        socs != nullptr && socs->is_array()) {
      for (const Json& soc : *socs) {
        if (soc.is_string()) spec->add_device_soc_versions(soc.get<std::string>());
      }
    }
    spec->set_credential_name(kube::StringAt(obj, "spec.credentialName"));
  }

  auto placed = placed_.find(key);
  const bool same_object = placed != placed_.end() && resource.has_value() &&
                           placed->second.uid == resource->ref().uid() &&
                           placed->second.version == resource->version();
  if (placed != placed_.end()) {
    std::vector<std::string> removed;
    for (const std::string& node : placed->second.nodes) {
      if (nodes.contains(node)) continue;
      RETURN_IF_ERROR(context().edge->Remove(node, placed->second.ref));
      removed.push_back(node);
    }
    for (const std::string& node : removed) placed->second.nodes.erase(node);
    if (!removed.empty()) {
      LOG(INFO) << "model " << key << ": removed from nodes " << absl::StrJoin(removed, ",");
    }
  }
  if (!resource.has_value() || nodes.empty()) {
    if (placed != placed_.end() && placed->second.nodes.empty()) placed_.erase(placed);
    return absl::OkStatus();
  }
  Placement& placement = placed_[key];
  if (!same_object) {
    placement.uid = resource->ref().uid();
    placement.version = resource->version();
    placement.ref = resource->ref();
    placement.nodes.clear();  // Every node gets the new version below.
  }
  for (const std::string& node : nodes) {
    if (placement.nodes.contains(node)) continue;
    RETURN_IF_ERROR(context().edge->Upsert(node, *resource));
    placement.nodes.insert(node);
    LOG(DEBUG) << "model " << key << ": sent to node " << node << " (version "
               << resource->version() << ")";
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------------
// Reconcile

absl::StatusOr<kube::ReconcileResult> ModelController::Reconcile(const std::string& key) {
  RETURN_IF_ERROR(Place(key));
  absl::StatusOr<kube::ObjectPtr> object = models_->GetLister().GetByKey(key);
  if (!object.ok()) {
    if (absl::IsNotFound(object.status())) return kube::ReconcileResult{};
    return object.status();
  }
  if (kube::IsBeingDeleted(**object)) return kube::ReconcileResult{};
  std::vector<kube::StatusCause> causes = Problems(**object);
  if (!causes.empty()) {
    RETURN_IF_ERROR(RecordSpecInvalid(context(), api::resources::Models(), *object, causes));
  } else {
    RETURN_IF_ERROR(RecordSpecValid(context(), api::resources::Models(), *object));
  }
  return kube::ReconcileResult{};
}

// ---------------------------------------------------------------------------------------------
// Reports

ReportOutcome ModelController::HandleReport(std::string_view node,
                                            const v1::StatusReport& report) {
  const v1::ObjectRef& ref = report.ref();
  const std::string key = kube::MakeKey(ref.namespace_(), ref.name());
  if (ref.kind() != kKind || !report.has_model()) {
    return ReportOutcome::Rejected(
        "Invalid", absl::StrCat("report ", report.seq(), " about ", ref.kind(), " ", key,
                                " does not carry a model status"));
  }
  {
    absl::MutexLock lock(&mu_);
    auto it = placed_.find(key);
    if (it == placed_.end() || !it->second.nodes.contains(std::string(node))) {
      return ReportOutcome::Rejected(
          "NotThisNode", absl::StrCat("model ", key, " is not sent to node ", ToAbsl(node)));
    }
  }
  const v1::ModelStatus& reported = report.model();
  std::string reason = reported.error_reason();
  if (!reported.verified() && reason.empty()) reason = std::string(reasons::kNotVerified);
  const std::string message =
      reported.verified() ? std::string()
                          : absl::StrCat("node ", ToAbsl(node), ": ",
                                         reported.error_message().empty()
                                             ? std::string("the model could not be verified")
                                             : reported.error_message());
  const absl::Time now = context().clock->Now();
  const absl::Time checked_at =
      net::FromProtoTime(reported.update_time()).value_or(now);
  const std::optional<int64_t> observed_generation =
      GenerationOfVersion(report.observed_version());

  kube::ObjectPtr cached;
  if (absl::StatusOr<kube::ObjectPtr> hit = models_->GetLister().GetByKey(key); hit.ok()) {
    cached = *std::move(hit);
  }
  absl::StatusOr<StatusWrite> write = WriteStatus(
      *context().client, api::resources::Models(), ref.namespace_(), ref.name(), ref.uid(),
      [&](const Json&, Json* status) -> absl::Status {
        (*status)["verified"] = reported.verified();
        if (!reported.sha256().empty()) (*status)["sha256"] = reported.sha256();
        (*status)["updateTime"] = kube::FormatTimestamp(checked_at);
        if (reported.verified()) {
          status->erase("reason");
          status->erase("message");
          SetStatusCondition(status, conditions::kVerified, condition_status::kTrue,
                             reasons::kVerified,
                             absl::StrCat("fetched and verified on node ", ToAbsl(node)), now);
        } else {
          (*status)["reason"] = reason;
          (*status)["message"] = message;
          SetStatusCondition(status, conditions::kVerified, condition_status::kFalse, reason,
                             message, now);
        }
        if (observed_generation.has_value()) (*status)["observedGeneration"] = *observed_generation;
        return absl::OkStatus();
      },
      cached);
  if (!write.ok()) {
    const absl::Status& s = write.status();
    if (absl::IsNotFound(s)) return ReportOutcome::Rejected("ObjectGone", std::string(s.message()));
    LOG(WARNING) << "model " << key << ": report " << report.seq() << " from node " << node
                 << " not written: " << s;
    return ReportOutcome::Retry(kube::IsConflict(s) ? "Conflict" : "ApiError",
                                std::string(s.message()));
  }
  if (!write->written || context().events == nullptr) return ReportOutcome::Accepted();
  std::optional<api::Condition> before = FindStatusCondition(write->before, conditions::kVerified);
  if (reported.verified()) {
    if (!before.has_value() || before->status != condition_status::kTrue) {
      context().events->Record(write->object, kube::EventType::kNormal, reasons::kModelVerified,
                               absl::StrCat("fetched and verified on node ", ToAbsl(node)));
    }
  } else if (!before.has_value() || before->status != condition_status::kFalse ||
             before->reason != reason || before->message != message) {
    LOG(WARNING) << "model " << key << ": " << reason << ": " << message;
    context().events->Record(write->object, kube::EventType::kWarning,
                             reasons::kVerificationFailed, absl::StrCat(reason, ": ", message));
  }
  return ReportOutcome::Accepted();
}

}  // namespace nereid::gm
