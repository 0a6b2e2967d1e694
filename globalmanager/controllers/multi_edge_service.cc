#include "globalmanager/controllers/multi_edge_service.h"

#include <algorithm>
#include <cstddef>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/api/json_fields.h"
#include "common/api/multi_edge_common.h"
#include "common/api/sedna_contract.h"
#include "common/api/validation.h"
#include "common/status/macros.h"
#include "common/strings/absl_compat.h"
#include "globalmanager/controllers/informer_handlers.h"
#include "globalmanager/controllers/model_resolver.h"
#include "globalmanager/controllers/owned_children.h"
#include "globalmanager/controllers/owner_liveness.h"
#include "globalmanager/controllers/placement.h"
#include "globalmanager/controllers/s3_credentials.h"
#include "globalmanager/controllers/service_phase_status.h"
#include "globalmanager/controllers/spec_validity.h"

namespace nereid::gm {
namespace {

using kube::Json;

constexpr char kModelIndex[] = "multiedge-models";

bool PodTerminated(const Json& pod) {
  const std::string phase = kube::StringAt(pod, "status.phase");
  return phase == "Failed" || phase == "Succeeded";
}

}  // namespace

MultiEdgeServiceController::MultiEdgeServiceController(std::string name,
                                                       const ControllerContext& context,
                                                       KindInfo info)
    : ReconcilingController(std::move(name), context),
      info_(info),
      services_(Watch(*info.resource)),
      deployments_(WatchOwned(kube::resources::Deployments(), std::string(info.kind))),
      k8s_services_(WatchOwned(kube::resources::Services(), std::string(info.kind))),
      pods_(info.owns_pods ? WatchOwned(kube::resources::Pods(), std::string(info.kind)) : nullptr),
      created_deployments_(context.clock, deployments_),
      created_services_(context.clock, k8s_services_),
      placements_(context.edge, info.kind, info.owner_spec) {
  if (pods_ != nullptr) created_pods_.emplace(context.clock, pods_);
  nodes_ = Read(kube::resources::Nodes());
  // A node appearing, changing labels or going away may change where pinned workers are.
  nodes_->AddEventHandler(OnPlacementChange([this] {
    for (const std::string& key : services_->GetLister().ListKeys()) Enqueue(key);
  }));
}

MultiEdgeServiceController::~MultiEdgeServiceController() { Stop(); }

absl::Status MultiEdgeServiceController::WatchModels(
    std::function<std::vector<std::string>(const Json&)> model_names) {
  RETURN_IF_ERROR(services_->AddIndexers({{kModelIndex, [model_names](const Json& object) {
                                             std::vector<std::string> keys;
                                             for (const std::string& n : model_names(object)) {
                                               keys.push_back(
                                                   kube::MakeKey(kube::Namespace(object), n));
                                             }
                                             return keys;
                                           }}}));
  models_ = Read(api::resources::Models());
  models_->AddEventHandler(OnSpecChange([this](const kube::ObjectPtr& model) {
    absl::StatusOr<std::vector<kube::ObjectPtr>> referrers =
        services_->GetLister().ByIndex(kModelIndex, kube::Key(*model));
    if (!referrers.ok()) return;
    for (const kube::ObjectPtr& s : *referrers) Enqueue(kube::Key(*s));
  }));
  return absl::OkStatus();
}

absl::StatusOr<api::Model> MultiEdgeServiceController::FindModel(std::string_view ns,
                                                                 std::string_view name) const {
  if (models_ == nullptr) {
    return absl::NotFoundError(MissingReferenceMessage(api::kinds::kModel, ns, name));
  }
  return ResolveModel(models_->GetLister(), ns, name);
}

ServicePlan MultiEdgeServiceController::Waiting(std::string_view reason, std::string_view message) {
  ServicePlan plan;
  plan.kind = ServicePlan::Kind::kWaiting;
  plan.reason = std::string(reason);
  plan.message = std::string(message);
  return plan;
}

absl::StatusOr<std::vector<std::string>> MultiEdgeServiceController::EdgeNodesOf(
    const Json& pod_spec) const {
  ASSIGN_OR_RETURN(Placement placement, PlacePodSpec(pod_spec, nodes_->GetLister()));
  return placement.nodes;
}

ServicePlan MultiEdgeServiceController::Invalid(std::vector<kube::StatusCause> causes) {
  ServicePlan plan;
  plan.kind = ServicePlan::Kind::kInvalid;
  plan.causes = std::move(causes);
  plan.message = api::FormatCauses(plan.causes);
  return plan;
}

ServicePlan MultiEdgeServiceController::Invalid(const absl::Status& status,
                                                std::string_view field) {
  std::vector<kube::StatusCause> causes = kube::Causes(status);
  if (causes.empty()) {
    causes.push_back({std::string(api::cause_reasons::kInvalid), std::string(status.message()),
                      std::string(field)});
  }
  return Invalid(std::move(causes));
}

ServicePlan MultiEdgeServiceController::PlanTrackingPipeline(
    const Json& object, const api::InlineDeploymentSpec& reid, const api::TemplateWorker* user,
    const std::vector<api::TemplateWorker>& tracking, std::vector<kube::StatusCause> causes) const {
  std::vector<std::pair<const api::PodTemplate*, std::string>> templates;
  if (user != nullptr) templates.push_back({&user->pod_template, "spec.userWorker.template"});
  templates.push_back({&reid.pod_template, "spec.reidWorkers.template"});
  for (size_t i = 0; i < tracking.size(); ++i) {
    templates.push_back(
        {&tracking[i].pod_template, absl::StrCat("spec.trackingWorkers[", i, "].template")});
  }
  CheckNodeSelections(templates, &causes);
  if (!causes.empty()) return Invalid(std::move(causes));

  const WorkerOwner owner = WorkerOwner::FromObject(info_.kind, object);
  const std::string& lc_server = context().settings.lc_server;
  const EdgeNodesFn edge_nodes = [this](const Json& s) { return EdgeNodesOf(s); };
  ServicePlan plan;
  std::vector<EnvVar> urls;
  absl::Status added = AddObjectKindWorker(owner, reid.pod_template, kReidWorkers, reid.Replicas(),
                                           reid.extra, lc_server, edge_nodes, &plan.children);
  if (added.ok() && user != nullptr) {
    added = AddObjectKindWorker(owner, user->pod_template, kUserWorker, 1, Json::object(),
                                lc_server, edge_nodes, &plan.children);
    urls.push_back({std::string(api::env::kUserWorkerUrl),
                    ServiceUrl(owner, api::worker_types::kUserWorker, api::ports::kUserWorker)});
  }
  if (added.ok()) {
    urls.push_back({std::string(api::env::kEdgemeshUrl),
                    ServiceUrl(owner, api::worker_types::kReidWorker, api::ports::kReidWorker)});
    added = AddTrackingWorkers(owner, tracking, urls, lc_server, edge_nodes, &plan.children);
  }
  if (!added.ok()) return Invalid(added, "spec");
  return plan;
}

absl::Status MultiEdgeServiceController::Forget(const std::string& key) {
  RETURN_IF_ERROR(placements_.Forget(key));
  if (context().models != nullptr) context().models->ReleaseAll(Requester(key));
  return absl::OkStatus();
}

std::string MultiEdgeServiceController::Requester(const std::string& key) const {
  return absl::StrCat(ToAbsl(info_.kind), "/", key);
}

absl::Status MultiEdgeServiceController::PrimeEdge() {
  for (const kube::ObjectPtr& object : services_->GetLister().List()) {
    if (kube::IsBeingDeleted(*object)) continue;
    ServicePlan plan = MakePlan(*object);
    if (plan.kind != ServicePlan::Kind::kReady) continue;
    RETURN_IF_ERROR(placements_.Sync(kube::Key(*object), *object, plan.children.edge_workers));
    if (context().models != nullptr) {
      context().models->SetRequirements(Requester(kube::Key(*object)), plan.children.model_needs);
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<kube::ReconcileResult> MultiEdgeServiceController::Reconcile(
    const std::string& key) {
  ASSIGN_OR_RETURN(const kube::ObjectPtr object,
                   LiveOrForget(services_, key, [&] { return Forget(key); }));
  if (object == nullptr) return kube::ReconcileResult{};

  ServicePlan plan = MakePlan(*object);
  if (plan.kind != ServicePlan::Kind::kReady) {
    // Nothing is created or changed; what runs keeps running on the last valid spec. Retrying
    // cannot help: the user's edit (or the Model appearing) enqueues the service again.
    const bool invalid = plan.kind == ServicePlan::Kind::kInvalid;
    RETURN_IF_ERROR(WriteNotReadyPhase(
        context(), *info_.resource, object, invalid,
        invalid ? kInvalidSpecReason : std::string_view(plan.reason), plan.message,
        HasChildren(*object) ? std::optional(StateOf(*object, plan.children)) : std::nullopt));
    // Secrets are not watched: a Secret problem is looked at again after a while.
    if (!invalid && plan.reason != kModelNotFound) {
      return kube::ReconcileResult{.requeue_after = kCredentialRecheckPeriod};
    }
    return kube::ReconcileResult{};
  }

  if (NeedsLivenessCheck(*object, Presence(*object, plan.children))) {
    // Not while the service is gone or going (owner_liveness.h); its deletion event follows.
    ASSIGN_OR_RETURN(const bool exists,
                     OwnerStillExists(*context().client, *info_.resource, *object));
    if (!exists) return kube::ReconcileResult{};
  }
  std::vector<std::string> problems;
  absl::Status synced = SyncChildren(*object, plan.children, &problems);
  RETURN_IF_ERROR(placements_.Sync(key, *object, plan.children.edge_workers));
  if (context().models != nullptr) {
    context().models->SetRequirements(Requester(key), plan.children.model_needs);
  }
  RETURN_IF_ERROR(WriteSyncedPhase(context(), *info_.resource, object,
                                   StateOf(*object, plan.children), problems));
  RETURN_IF_ERROR(synced);
  return kube::ReconcileResult{};
}

std::map<std::string, std::vector<kube::ObjectPtr>> MultiEdgeServiceController::PodsBySlot(
    const Json& object) const {
  std::map<std::string, std::vector<kube::ObjectPtr>> slots;
  if (pods_ == nullptr) return slots;
  const WorkerOwner owner = WorkerOwner::FromObject(info_.kind, object);
  for (const kube::ObjectPtr& p : created_pods_->List(
           pods_->GetLister(), owner.ns, kube::LabelSelector::FromMap(owner.SelectorLabels()))) {
    if (!IsControlledBy(*p, owner) || kube::IsBeingDeleted(*p)) continue;
    slots[kube::Label(*p, kWorkerSlotLabel).value_or("")].push_back(p);
  }
  return slots;
}

bool MultiEdgeServiceController::HasChildren(const Json& object) const {
  const WorkerOwner owner = WorkerOwner::FromObject(info_.kind, object);
  for (const kube::ObjectPtr& d : created_deployments_.List(
           deployments_->GetLister(), owner.ns,
           kube::LabelSelector::FromMap(owner.SelectorLabels()))) {
    if (IsControlledBy(*d, owner)) return true;
  }
  return !PodsBySlot(object).empty();
}

ChildPresence MultiEdgeServiceController::Presence(const Json& object,
                                                   const ServiceChildren& children) const {
  const std::string ns = kube::Namespace(object);
  ChildPresence presence;
  auto count = [&presence](bool present) { ++(present ? presence.present : presence.missing); };
  for (const Json& d : children.deployments) {
    count(created_deployments_.Get(deployments_->GetLister(), ns, kube::Name(d)) != nullptr);
  }
  for (const Json& s : children.services) {
    count(created_services_.Get(k8s_services_->GetLister(), ns, kube::Name(s)) != nullptr);
  }
  const auto slots = PodsBySlot(object);
  for (const Json& p : children.pods) {
    count(slots.count(kube::Label(p, kWorkerSlotLabel).value_or("")) > 0);
  }
  return presence;
}

ServiceState MultiEdgeServiceController::StateOf(const Json& object,
                                                 const ServiceChildren& children) const {
  const WorkerOwner owner = WorkerOwner::FromObject(info_.kind, object);
  std::vector<NamedWorker> workers;
  if (children.deployments.empty() && children.pods.empty()) {
    // No plan (invalid spec with workers still running): judge what exists.
    for (const kube::ObjectPtr& d : created_deployments_.List(
             deployments_->GetLister(), owner.ns,
             kube::LabelSelector::FromMap(owner.SelectorLabels()))) {
      if (IsControlledBy(*d, owner)) {
        workers.push_back({absl::StrCat("Deployment ", kube::Name(*d)), AssessDeployment(d.get())});
      }
    }
    for (const auto& [slot, pods] : PodsBySlot(object)) {
      workers.push_back({absl::StrCat("pod ", kube::Name(*pods.front())),
                         AssessPod(pods.front().get())});
    }
    return ComputeServiceState(workers);
  }
  for (size_t i = 0; i < children.deployments.size(); ++i) {
    const std::string name = kube::Name(children.deployments[i]);
    const kube::ObjectPtr d = created_deployments_.Get(deployments_->GetLister(), owner.ns, name);
    const bool ours = d != nullptr && IsControlledBy(*d, owner);
    workers.push_back({i < children.deployment_names.size() ? children.deployment_names[i]
                                                            : absl::StrCat("Deployment ", name),
                       AssessDeployment(ours ? d.get() : nullptr)});
  }
  const auto slots = PodsBySlot(object);
  for (size_t i = 0; i < children.pods.size(); ++i) {
    auto it = slots.find(kube::Label(children.pods[i], kWorkerSlotLabel).value_or(""));
    workers.push_back({i < children.pod_names.size() ? children.pod_names[i] : "pod",
                       AssessPod(it == slots.end() ? nullptr : it->second.front().get())});
  }
  return ComputeServiceState(workers);
}

absl::Status MultiEdgeServiceController::SyncChildren(const Json& object,
                                                      const ServiceChildren& children,
                                                      std::vector<std::string>* problems) {
  OwnedChildSync sync(context(), *info_.resource, object, problems);
  absl::Status status;
  // Services first: the workers' env names them.
  for (const Json& s : children.services) {
    status.Update(
        sync.Apply({&kube::resources::Services(), k8s_services_, &created_services_}, s));
  }
  for (const Json& d : children.deployments) {
    status.Update(
        sync.Apply({&kube::resources::Deployments(), deployments_, &created_deployments_}, d));
  }
  if (pods_ != nullptr) status.Update(SyncPods(object, children, sync));
  return status;
}

absl::Status MultiEdgeServiceController::SyncPods(const Json& object,
                                                  const ServiceChildren& children,
                                                  OwnedChildSync& sync) {
  const kube::Resource& resource = kube::resources::Pods();
  absl::Status status;
  auto slots = PodsBySlot(object);
  std::set<std::string> wanted;
  for (const Json& desired : children.pods) {
    const std::string slot = kube::Label(desired, kWorkerSlotLabel).value_or("");
    wanted.insert(slot);
    auto it = slots.find(slot);
    if (it == slots.end()) {
      // Pods have generated names, so a second create would not collide with one the cache does
      // not show yet: PodsBySlot counts the pods we created (CreatedChildren) in their slots.
      status.Update(sync.Create({&resource, pods_, &*created_pods_}, desired));
      continue;
    }
    // One pod per slot: extra ones (a create that raced the cache), pods from another spec, and
    // pods that ended are replaced (a Pod cannot be updated in place).
    for (size_t i = 0; i < it->second.size(); ++i) {
      const Json& pod = *it->second[i];
      if (i > 0) {
        status.Update(sync.Delete(resource, pod, "more than one pod for its worker"));
      } else if (TemplateHashOf(pod) != TemplateHashOf(desired)) {
        status.Update(sync.Delete(resource, pod, "the spec changed"));
      } else if (PodTerminated(pod)) {
        status.Update(sync.Delete(resource, pod,
                                  absl::StrCat("it ended (", kube::StringAt(pod, "status.phase"),
                                               "); a new one replaces it")));
      }
    }
  }
  for (const auto& [slot, pods] : slots) {
    if (wanted.count(slot) > 0) continue;
    for (const kube::ObjectPtr& p : pods) {
      status.Update(sync.Delete(resource, *p, "its worker is no longer in the spec"));
    }
  }
  return status;
}

}  // namespace nereid::gm
