#include "globalmanager/controllers/model_controller.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/api/model.h"
#include "common/api/sedna_contract.h"
#include "common/api/validation.h"
#include "common/log/log.h"
#include "common/net/edge_protocol.h"
#include "common/net/storage_credential.h"
#include "common/s3/s3_url.h"
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
  RETURN_IF_ERROR(context.RequireClientInformersEdge("ModelController"));
  std::unique_ptr<ModelController> controller(new ModelController(context));
  RETURN_IF_ERROR(RegisterReportSink(context, kKind, controller.get()));
  return controller;
}

ModelController::ModelController(const ControllerContext& context)
    : ReconcilingController("model", context),
      credential_reader_(context),
      placements_(context.edge, "model") {
  models_ = Watch(api::resources::Models());
}

ModelController::~ModelController() { Stop(); }

std::set<std::string> ModelController::PlacedNodes(const std::string& key) const {
  return placements_.Nodes(key);
}

std::optional<api::ModelSpec> ModelController::SpecOf(const Json& object,
                                                      std::vector<kube::StatusCause>* causes) {
  std::optional<api::Model> model = ParseSpec<api::Model>(object, causes);
  if (!model.has_value()) return std::nullopt;
  for (const std::string& node : AnnotatedNodes(object)) {
    if (!api::IsDnsSubdomain(node)) {
      api::AddInvalid(absl::StrCat("metadata.annotations[", ToAbsl(kModelNodesAnnotation), "]"),
                      absl::StrCat("\"", node, "\" is not a valid node name"), causes);
    }
  }
  if (!causes->empty()) return std::nullopt;
  return std::move(model->spec);
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
  for (const kube::ObjectPtr& object : models_->GetLister().List()) {
    // An unusable Secret leaves the Model unplaced; its reconcile reports it (an invalid spec too).
    std::vector<kube::StatusCause> causes;
    std::optional<api::ModelSpec> spec = SpecOf(*object, &causes);
    if (!spec.has_value()) continue;
    absl::StatusOr<std::optional<CredentialProblem>> problem = RefreshCredential(*object, *spec);
    if (!problem.ok()) LOG(WARNING) << "model " << kube::Key(*object) << ": " << problem.status();
  }
  absl::MutexLock lock(&mu_);
  for (const kube::ObjectPtr& object : models_->GetLister().List()) {
    RETURN_IF_ERROR(PlaceLocked(kube::Key(*object)));
  }
  // Needs declared before the cache synced for Models that exist only now.
  for (const auto& [key, nodes] : needs_) RETURN_IF_ERROR(PlaceLocked(key));
  LOG(INFO) << "model controller: " << placements_.size() << " models in the edge registry";
  return absl::OkStatus();
}

absl::StatusOr<std::optional<CredentialProblem>> ModelController::RefreshCredential(
    const Json& object, const api::ModelSpec& spec) {
  const std::string key = kube::Key(object);
  std::optional<CredentialProblem> problem;
  absl::StatusOr<std::optional<SecretCredential>> credential = credential_reader_.ReadFor(
      kube::Namespace(object), spec.url, spec.credential_name, &problem);
  if (!credential.ok() && !problem.has_value()) return credential.status();
  absl::MutexLock lock(&mu_);
  if (credential.ok()) {
    credentials_[key] = *std::move(credential);
  } else {
    credentials_.erase(key);
  }
  return problem;
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
  std::vector<kube::StatusCause> causes;
  std::optional<api::ModelSpec> spec;
  if (object != nullptr && !kube::IsBeingDeleted(*object)) spec = SpecOf(*object, &causes);
  if (!spec.has_value()) {
    credentials_.erase(key);
    return placements_.Forget(key);
  }
  auto credential = credentials_.find(key);
  if (credential == credentials_.end() && !spec->credential_name.empty()) {
    return placements_.Forget(key);  // Its Secret is not read yet, or unusable.
  }
  std::set<std::string> nodes;
  if (auto it = needs_.find(key); it != needs_.end()) {
    for (const auto& [node, requesters] : it->second) nodes.insert(node);
  }
  for (std::string& node : AnnotatedNodes(*object)) nodes.insert(std::move(node));
  v1::Resource resource;
  *resource.mutable_ref() = EdgeRef(kKind, *object);
  resource.set_version(EdgeVersion(*object));
  v1::ModelSpec* edge_spec = resource.mutable_model();
  if (credential != credentials_.end() && credential->second.has_value()) {
    resource.set_version(VersionWithCredential(resource.version(), *credential->second));
    net::SetS3Credential(credential->second->credential, edge_spec->mutable_s3_credential());
  }
  edge_spec->set_url(spec->url);
  edge_spec->set_format(spec->format);
  edge_spec->set_sha256(absl::AsciiStrToLower(spec->sha256));
  for (const std::string& soc : spec->device_soc_versions) edge_spec->add_device_soc_versions(soc);
  edge_spec->set_credential_name(spec->credential_name);
  return placements_.Sync(key, resource, nodes);
}

// ---------------------------------------------------------------------------------------------
// Reconcile

absl::StatusOr<kube::ReconcileResult> ModelController::Reconcile(const std::string& key) {
  absl::StatusOr<kube::ObjectPtr> object = models_->GetLister().GetByKey(key);
  if (!object.ok() || kube::IsBeingDeleted(**object)) {
    RETURN_IF_ERROR(Place(key));
    if (!object.ok() && !absl::IsNotFound(object.status())) return object.status();
    return kube::ReconcileResult{};
  }
  std::vector<kube::StatusCause> causes;
  std::optional<api::ModelSpec> spec = SpecOf(**object, &causes);
  if (!spec.has_value()) {
    RETURN_IF_ERROR(Place(key));
    RETURN_IF_ERROR(RecordSpecInvalid(context(), api::resources::Models(), *object, causes));
    return kube::ReconcileResult{};
  }
  ASSIGN_OR_RETURN(std::optional<CredentialProblem> problem, RefreshCredential(**object, *spec));
  RETURN_IF_ERROR(Place(key));
  const bool has_credential = !spec->credential_name.empty() && s3::IsS3Url(spec->url);
  const kube::ReconcileResult recheck{
      .requeue_after = has_credential ? kCredentialRecheckPeriod : absl::ZeroDuration()};
  if (problem.has_value()) {
    RETURN_IF_ERROR(RecordSpecInvalid(context(), api::resources::Models(), *object,
                                      problem->reason, problem->message));
    return recheck;
  }
  RETURN_IF_ERROR(RecordSpecValid(context(), api::resources::Models(), *object));
  return recheck;
}

// ---------------------------------------------------------------------------------------------
// Reports

ReportOutcome ModelController::HandleReport(std::string_view node,
                                            const v1::StatusReport& report) {
  const v1::ObjectRef& ref = report.ref();
  const std::string key = kube::MakeKey(ref.namespace_(), ref.name());
  if (ref.kind() != kKind || !report.has_model()) {
    return RejectedPayload(report, "a model status");
  }
  const v1::ModelStatus& reported = report.model();
  kube::ObjectPtr cached;
  if (absl::StatusOr<kube::ObjectPtr> hit = models_->GetLister().GetByKey(key); hit.ok()) {
    cached = *std::move(hit);
  }
  std::string reason = reported.error_reason();
  std::string detail = reported.error_message();
  // Not verified without an error: the LC had no digest to compare (it checks only presence).
  const bool nothing_to_verify = !reported.verified() && reason.empty() && cached != nullptr &&
                                 kube::StringAt(*cached, "spec.sha256").empty();
  if (nothing_to_verify) {
    reason = std::string(reasons::kNoDigest);
    const std::string url = kube::StringAt(*cached, "spec.url");
    detail = absl::StartsWith(url, "http://") || absl::StartsWith(url, "https://")
                 ? "spec.sha256 is not set, so there is nothing to verify the model against "
                   "(an http(s) model is fetched only to check its digest)"
                 : "the model is present; spec.sha256 is not set, so there is nothing to verify "
                   "it against";
  } else if (!reported.verified() && reason.empty()) {
    reason = std::string(reasons::kNotVerified);
  }
  if (!reported.verified() && detail.empty()) detail = "the model could not be verified";
  const std::string message =
      reported.verified() ? std::string() : absl::StrCat("node ", ToAbsl(node), ": ", detail);
  const absl::Time now = context().clock->Now();
  const absl::Time checked_at =
      net::FromProtoTime(reported.update_time()).value_or(now);
  const std::optional<int64_t> observed_generation =
      GenerationOfVersion(report.observed_version());
  absl::StatusOr<StatusWrite> write = WriteStatus(
      *context().client, api::resources::Models(), ref.namespace_(), ref.name(), ref.uid(),
      [&](const Json&, Json* status) -> absl::Status {
        api::FieldReader lenient;  // A malformed field reads as absent: ours to rewrite.
        api::ModelStatus typed = api::ReadModelStatus(*status, &lenient);
        typed.verified = reported.verified();
        if (!reported.sha256().empty()) typed.sha256 = reported.sha256();
        typed.update_time = checked_at;
        if (reported.verified()) {
          typed.reason.clear();
          typed.message.clear();
          api::SetCondition(&typed.conditions, conditions::kVerified, condition_status::kTrue,
                            reasons::kVerified,
                            absl::StrCat("fetched and verified on node ", ToAbsl(node)), now);
        } else {
          typed.reason = reason;
          typed.message = message;
          api::SetCondition(&typed.conditions, conditions::kVerified, condition_status::kFalse,
                            reason, message, now);
        }
        if (observed_generation.has_value()) typed.observed_generation = observed_generation;
        // Not metrics: the FL controller writes those from its reports.
        PutStatusFields(typed.ToJson(),
                        {"verified", "sha256", "updateTime", "reason", "message",
                         "observedGeneration", "conditions"},
                        status);
        return absl::OkStatus();
      },
      cached);
  if (!write.ok()) return ReportWriteFailure("model", key, node, report, write.status());
  if (!write->written) return ReportOutcome::Accepted();
  std::optional<api::Condition> before = FindStatusCondition(write->before, conditions::kVerified);
  if (reported.verified()) {
    if (!before.has_value() || before->status != condition_status::kTrue) {
      RecordEvent(context(), api::resources::Models(), write->object, kube::EventType::kNormal,
                  reasons::kModelVerified,
                  absl::StrCat("fetched and verified on node ", ToAbsl(node)));
    }
  } else if (!nothing_to_verify &&
             (!before.has_value() || before->status != condition_status::kFalse ||
              before->reason != reason || before->message != message)) {
    LOG(WARNING) << "model " << key << ": " << reason << ": " << message;
    RecordEvent(context(), api::resources::Models(), write->object, kube::EventType::kWarning,
                reasons::kVerificationFailed, absl::StrCat(reason, ": ", message));
  }
  return ReportOutcome::Accepted();
}

absl::StatusOr<std::unique_ptr<GmController>> MakeModelController(ControllerContext& context) {
  absl::StatusOr<std::unique_ptr<ModelController>> controller = ModelController::Create(context);
  if (controller.ok()) context.models = controller->get();
  return AsGmController(std::move(controller));
}

}  // namespace nereid::gm
