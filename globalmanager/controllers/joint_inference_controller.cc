#include "globalmanager/controllers/joint_inference_controller.h"

#include <algorithm>
#include <cstddef>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/api/json_fields.h"
#include "common/api/model.h"
#include "common/api/sedna_contract.h"
#include "common/api/validation.h"
#include "common/log/log.h"
#include "common/status/macros.h"
#include "common/strings/absl_compat.h"
#include "globalmanager/controllers/controller_events.h"
#include "globalmanager/controllers/edge_dispatcher.h"
#include "globalmanager/controllers/edge_objects.h"
#include "globalmanager/controllers/informer_handlers.h"
#include "globalmanager/controllers/model_requirements.h"
#include "globalmanager/controllers/model_resolver.h"
#include "globalmanager/controllers/owner_liveness.h"
#include "globalmanager/controllers/registry.h"
#include "globalmanager/controllers/s3_credentials.h"
#include "globalmanager/controllers/service_phase_status.h"
#include "globalmanager/controllers/spec_validity.h"
#include "globalmanager/controllers/worker_metrics_report.h"

namespace nereid::gm {
namespace {

using kube::Json;
namespace v1 = edge::v1;
namespace reasons = ji_reasons;

constexpr std::string_view kKind = api::kinds::kJointInferenceService;
constexpr char kModelIndex[] = "jointinferenceservice-models";

const kube::Resource& Services() { return api::resources::JointInferenceServices(); }

std::string Requester(const std::string& key) { return absl::StrCat(ToAbsl(kKind), "/", key); }

// The Models a service names, as "namespace/name" (for the index).
std::vector<std::string> ModelKeys(const Json& object) {
  std::vector<std::string> keys;
  std::optional<api::JointInferenceService> parsed = ReadSpec<api::JointInferenceService>(object);
  if (!parsed.has_value()) return keys;
  const std::string ns = kube::Namespace(object);
  for (const std::string* name :
       {&parsed->spec.edge_worker.model.name, &parsed->spec.cloud_worker.model.name}) {
    if (!name->empty()) keys.push_back(kube::MakeKey(ns, *name));
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

std::string Lines(const std::vector<std::string>& items) { return absl::StrJoin(items, "; "); }

v1::Resource EdgeResource(const Json& object, const api::JointInferenceService& service,
                          const std::string& node) {
  v1::Resource resource;
  *resource.mutable_ref() = EdgeRef(kKind, object);
  resource.set_version(EdgeVersion(object));
  v1::JointInferenceServiceSpec* spec = resource.mutable_joint_inference_service();
  v1::JointInferenceServiceSpec::EdgeWorker* edge = spec->mutable_edge_worker();
  edge->set_model_name(service.spec.edge_worker.model.name);
  edge->set_node_name(node);
  v1::HardExampleMining* hem = edge->mutable_hard_example_mining();
  hem->set_name(service.spec.edge_worker.hard_example_mining.name);
  for (const api::ParaSpec& p : service.spec.edge_worker.hard_example_mining.parameters) {
    v1::KeyValue* kv = hem->add_parameters();
    kv->set_key(p.key);
    kv->set_value(p.value);
  }
  spec->mutable_cloud_worker()->set_model_name(service.spec.cloud_worker.model.name);
  return resource;
}

}  // namespace

absl::StatusOr<std::unique_ptr<JointInferenceController>> JointInferenceController::Create(
    const ControllerContext& context) {
  RETURN_IF_ERROR(context.RequireClientInformersEdge("JointInferenceController"));
  std::unique_ptr<JointInferenceController> controller(new JointInferenceController(context));
  RETURN_IF_ERROR(controller->services_->AddIndexers(
      {{kModelIndex, [](const Json& object) { return ModelKeys(object); }}}));
  RETURN_IF_ERROR(RegisterReportSink(context, kKind, controller.get()));
  return controller;
}

JointInferenceController::JointInferenceController(const ControllerContext& context)
    : ReconcilingController("jointinference", context),
      deployments_(WatchOwned(kube::resources::Deployments(), std::string(kKind))),
      k8s_services_(WatchOwned(kube::resources::Services(), std::string(kKind))),
      hpas_(WatchOwned(kube::resources::HorizontalPodAutoscalers(), std::string(kKind))),
      created_deployments_(context.clock, deployments_),
      created_services_(context.clock, k8s_services_),
      created_hpas_(context.clock, hpas_),
      placements_(context.edge, "jointinferenceservice") {
  services_ = Watch(Services());

  models_ = Read(api::resources::Models());
  models_->AddEventHandler(
      OnSpecChange([this](const kube::ObjectPtr& model) { EnqueueModelReferrers(*model); }));
  nodes_ = Read(kube::resources::Nodes());
  nodes_->AddEventHandler(OnPlacementChange([this] { EnqueueSelectingServices(); }));
}

// Workers call Reconcile on this object: stop them before the members go away.
JointInferenceController::~JointInferenceController() { Stop(); }

void JointInferenceController::EnqueueModelReferrers(const Json& model) {
  absl::StatusOr<std::vector<kube::ObjectPtr>> referrers =
      services_->GetLister().ByIndex(kModelIndex, kube::Key(model));
  if (!referrers.ok()) return;
  for (const kube::ObjectPtr& service : *referrers) Enqueue(kube::Key(*service));
}

void JointInferenceController::EnqueueSelectingServices() {
  for (const kube::ObjectPtr& service : services_->GetLister().List()) {
    std::optional<api::JointInferenceService> parsed =
        ReadSpec<api::JointInferenceService>(*service);
    if (parsed.has_value() &&
        SelectsNodes(api::TemplatePodSpec(parsed->spec.edge_worker.pod_template))) {
      Enqueue(kube::Key(*service));
    }
  }
}

std::vector<std::string> JointInferenceController::EdgeNodes(const std::string& key) const {
  std::set<std::string> nodes = placements_.Nodes(key);
  return {nodes.begin(), nodes.end()};
}

void JointInferenceController::Record(const Json& object, kube::EventType type,
                                      std::string_view reason, std::string_view message) const {
  RecordEvent(context(), Services(), object, type, reason, message);
}

JointInferenceController::Plan JointInferenceController::MakePlan(const Json& object) const {
  Plan plan;
  // Only the spec decides; a malformed status is ours to rewrite.
  absl::StatusOr<api::JointInferenceService> parsed =
      ParseWithoutStatus<api::JointInferenceService>(object);
  if (!parsed.ok()) {
    plan.kind = Plan::Kind::kInvalid;
    plan.causes = kube::Causes(parsed.status());
    if (plan.causes.empty()) {
      plan.causes.push_back({std::string(api::cause_reasons::kInvalid),
                             std::string(parsed.status().message()), "spec"});
    }
    plan.message = api::FormatCauses(plan.causes);
    return plan;
  }
  plan.service = *std::move(parsed);
  plan.causes = plan.service.Validate();
  const Json& edge_spec = api::TemplatePodSpec(plan.service.spec.edge_worker.pod_template);
  if (absl::Status s = ValidateNodeSelection(edge_spec, "spec.edgeWorker.template.spec"); !s.ok()) {
    plan.causes.push_back({std::string(api::cause_reasons::kInvalid), std::string(s.message()),
                           "spec.edgeWorker.template.spec"});
  }
  if (!plan.causes.empty()) {
    plan.kind = Plan::Kind::kInvalid;
    plan.message = api::FormatCauses(plan.causes);
    return plan;
  }

  // Referenced Models: waiting until they exist.
  const std::string ns = kube::Namespace(object);
  JiModelUrls urls;
  std::vector<std::string> missing;
  std::string edge_credential;
  std::string cloud_credential;
  auto url_of = [&](const std::string& name, std::string* url, std::string* credential_name) {
    absl::StatusOr<api::Model> model = ResolveModel(models_->GetLister(), ns, name);
    if (!model.ok()) {
      missing.push_back(std::string(model.status().message()));
      return;
    }
    *url = model->spec.url;
    *credential_name = model->spec.credential_name;
  };
  url_of(plan.service.spec.edge_worker.model.name, &urls.edge, &edge_credential);
  if (plan.service.spec.cloud_worker.model.name != plan.service.spec.edge_worker.model.name ||
      missing.empty()) {
    url_of(plan.service.spec.cloud_worker.model.name, &urls.cloud, &cloud_credential);
  }
  if (!missing.empty()) {
    std::sort(missing.begin(), missing.end());
    missing.erase(std::unique(missing.begin(), missing.end()), missing.end());
    plan.kind = Plan::Kind::kWaiting;
    plan.reason = std::string(kModelNotFound);
    plan.message = Lines(missing);
    return plan;
  }
  // The Secret each Model names (s3:// models only), for the workers' storage-initializer.
  auto storage_of = [&](const std::string& url, const std::string& credential_name,
                        WorkerS3Options* out) {
    CredentialProblem problem;
    absl::StatusOr<WorkerS3Options> credential =
        ReadModelS3(context(), ns, url, credential_name, &problem);
    if (credential.ok()) {
      *out = *std::move(credential);
      return true;
    }
    // Also a transient API error waits (and is looked at again after the recheck period).
    plan.kind = Plan::Kind::kWaiting;
    plan.reason = std::move(problem.reason);
    plan.message = std::move(problem.message);
    return false;
  };
  if (!storage_of(urls.edge, edge_credential, &urls.edge_s3) ||
      !storage_of(urls.cloud, cloud_credential, &urls.cloud_s3)) {
    return plan;
  }

  absl::StatusOr<Placement> placement = PlacePodSpec(edge_spec, nodes_->GetLister());
  if (!placement.ok()) {
    plan.kind = Plan::Kind::kInvalid;
    plan.causes.push_back({std::string(api::cause_reasons::kInvalid),
                           std::string(placement.status().message()),
                           "spec.edgeWorker.template.spec"});
    plan.message = api::FormatCauses(plan.causes);
    return plan;
  }
  absl::StatusOr<JiChildren> children = BuildJointInferenceChildren(
      object, plan.service, urls, *placement, context().settings.lc_server);
  if (!children.ok()) {
    plan.kind = Plan::Kind::kInvalid;
    plan.causes = kube::Causes(children.status());
    if (plan.causes.empty()) {
      plan.causes.push_back({std::string(api::cause_reasons::kInvalid),
                             std::string(children.status().message()), "spec"});
    }
    plan.message = api::FormatCauses(plan.causes);
    return plan;
  }
  plan.children = *std::move(children);
  return plan;
}

absl::Status JointInferenceController::PrimeEdge() {
  int placed = 0;
  for (const kube::ObjectPtr& object : services_->GetLister().List()) {
    if (kube::IsBeingDeleted(*object)) continue;
    Plan plan = MakePlan(*object);
    if (plan.kind != Plan::Kind::kReady) continue;
    RETURN_IF_ERROR(Place(kube::Key(*object), *object, plan.service, plan.children.edge_nodes));
    ++placed;
  }
  LOG(INFO) << "jointinference controller: " << placed << " services in the edge registry";
  return absl::OkStatus();
}

absl::StatusOr<kube::ReconcileResult> JointInferenceController::Reconcile(const std::string& key) {
  ASSIGN_OR_RETURN(const kube::ObjectPtr object,
                   LiveOrForget(services_, key, [&] { return Forget(key); }));
  if (object == nullptr) return kube::ReconcileResult{};

  Plan plan = MakePlan(*object);
  if (plan.kind == Plan::Kind::kInvalid || plan.kind == Plan::Kind::kWaiting) {
    // Nothing is created or changed; what runs keeps running on the last valid spec. Retrying
    // cannot help: the user's edit (or the Model appearing) enqueues the service again.
    const bool invalid = plan.kind == Plan::Kind::kInvalid;
    RETURN_IF_ERROR(WriteNotReadyPhase(
        context(), Services(), object, invalid,
        invalid ? kInvalidSpecReason : std::string_view(plan.reason), plan.message,
        HasWorkers(*object) ? std::optional(StateOf(*object, plan.children)) : std::nullopt));
    // Secrets are not watched: a Secret problem is looked at again after a while.
    if (!invalid && plan.reason != kModelNotFound) {
      return kube::ReconcileResult{.requeue_after = kCredentialRecheckPeriod};
    }
    return kube::ReconcileResult{};
  }

  if (NeedsLivenessCheck(*object, Presence(*object, plan.children))) {
    // Not while the service is gone or going (owner_liveness.h); its deletion event follows.
    ASSIGN_OR_RETURN(const bool exists, OwnerStillExists(*context().client, Services(), *object));
    if (!exists) return kube::ReconcileResult{};
  }
  std::vector<std::string> problems;
  absl::Status synced = SyncChildren(*object, plan.children, &problems);
  RETURN_IF_ERROR(Place(key, *object, plan.service, plan.children.edge_nodes));
  if (context().models != nullptr) {
    std::vector<ModelNeed> needs;
    const std::string model_key =
        kube::MakeKey(kube::Namespace(*object), plan.service.spec.edge_worker.model.name);
    for (const std::string& node : plan.children.edge_nodes) needs.push_back({model_key, node});
    context().models->SetRequirements(Requester(key), needs);
  }
  RETURN_IF_ERROR(
      WriteSyncedPhase(context(), Services(), object, StateOf(*object, plan.children), problems));
  RETURN_IF_ERROR(synced);
  return kube::ReconcileResult{};
}

bool JointInferenceController::HasWorkers(const Json& object) const {
  const WorkerOwner owner = WorkerOwner::FromObject(kKind, object);
  for (const kube::ObjectPtr& d : created_deployments_.List(
           deployments_->GetLister(), owner.ns,
           kube::LabelSelector::FromMap(owner.SelectorLabels()))) {
    if (IsControlledBy(*d, owner)) return true;
  }
  return false;
}

JiState JointInferenceController::StateOf(const Json& object, const JiChildren& children) const {
  const WorkerOwner owner = WorkerOwner::FromObject(kKind, object);
  std::map<std::string, kube::ObjectPtr> ours;  // name → Deployment this service controls
  for (const kube::ObjectPtr& d : created_deployments_.List(
           deployments_->GetLister(), owner.ns,
           kube::LabelSelector::FromMap(owner.SelectorLabels()))) {
    if (IsControlledBy(*d, owner)) ours[kube::Name(*d)] = d;
  }
  auto health = [&](const std::string& name) {
    auto it = ours.find(name);
    return AssessDeployment(it == ours.end() ? nullptr : it->second.get());
  };
  if (children.deployments.empty()) {
    // No plan (invalid spec with workers still running): judge what exists.
    WorkerHealth cloud = health(api::DeploymentName(owner.name, api::worker_types::kCloud));
    std::vector<WorkerHealth> edges;
    for (const auto& [name, d] : ours) {
      if (kube::Label(*d, api::LabelKeyWorkerType(kKind)) == api::worker_types::kEdge) {
        edges.push_back(AssessDeployment(d.get()));
      }
    }
    return ComputeJiState(cloud, edges);
  }
  WorkerHealth cloud;
  std::vector<WorkerHealth> edges;
  for (const JiDeployment& d : children.deployments) {
    if (d.worker_type == api::worker_types::kCloud) {
      cloud = health(kube::Name(d.object));
    } else {
      edges.push_back(health(kube::Name(d.object)));
    }
  }
  return ComputeJiState(cloud, edges);
}

absl::Status JointInferenceController::Place(const std::string& key, const Json& object,
                                             const api::JointInferenceService& service,
                                             const std::vector<std::string>& nodes) {
  std::map<std::string, v1::Resource> resources;
  for (const std::string& node : nodes) resources[node] = EdgeResource(object, service, node);
  EdgeChange change;
  absl::Status s = placements_.Sync(key, resources, &change);
  if (!change.removed.empty()) {
    Record(object, kube::EventType::kNormal, reasons::kEdgeNodesChanged,
           absl::StrCat("edge worker nodes now [",
                        absl::StrJoin(std::set<std::string>(nodes.begin(), nodes.end()), ","),
                        "] (removed from ", absl::StrJoin(change.removed, ","), ")"));
  }
  return s;
}

absl::Status JointInferenceController::Forget(const std::string& key) {
  RETURN_IF_ERROR(placements_.Forget(key));
  if (context().models != nullptr) context().models->ReleaseAll(Requester(key));
  return absl::OkStatus();
}

ReportOutcome JointInferenceController::HandleReport(std::string_view node,
                                                     const v1::StatusReport& report) {
  const v1::ObjectRef& ref = report.ref();
  const std::string key = kube::MakeKey(ref.namespace_(), ref.name());
  if (ref.kind() != kKind || !report.has_worker()) {
    return RejectedPayload(report, "a worker report of a JointInferenceService");
  }
  std::vector<api::Metric> metrics;
  if (std::optional<ReportOutcome> bad = ReadWorkerMetrics(report, &metrics)) return *bad;
  kube::ObjectPtr cached;
  if (absl::StatusOr<kube::ObjectPtr> hit = services_->GetLister().GetByKey(key); hit.ok()) {
    cached = *std::move(hit);
  }
  return WriteWorkerMetrics(context(), Services(), std::move(cached), node, report,
                            std::move(metrics), {});
}

absl::StatusOr<std::unique_ptr<GmController>> MakeJointInferenceController(
    ControllerContext& context) {
  return CreateIfServed(context, Services(), &JointInferenceController::Create);
}

}  // namespace nereid::gm
