#include "globalmanager/controllers/joint_inference_controller.h"

#include <algorithm>
#include <cstddef>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/api/json_fields.h"
#include "common/api/sedna_contract.h"
#include "common/api/validation.h"
#include "common/kube/event_recorder.h"
#include "common/log/log.h"
#include "common/status/macros.h"
#include "common/strings/absl_compat.h"
#include "globalmanager/controllers/controller_events.h"
#include "globalmanager/controllers/edge_dispatcher.h"
#include "globalmanager/controllers/edge_objects.h"
#include "globalmanager/controllers/model_requirements.h"
#include "globalmanager/controllers/registry.h"
#include "globalmanager/controllers/spec_validity.h"
#include "globalmanager/controllers/status_conditions.h"
#include "globalmanager/controllers/status_writer.h"

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
  const std::string ns = kube::Namespace(object);
  for (const char* path : {"spec.edgeWorker.model.name", "spec.cloudWorker.model.name"}) {
    std::string name = kube::StringAt(object, path);
    if (!name.empty()) keys.push_back(kube::MakeKey(ns, name));
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

const Json& SpecOf(const Json& object, const char* worker) {
  static const Json kEmpty = Json::object();
  const Json* spec = kube::FindPath(object, absl::StrCat("spec.", worker, ".template.spec"));
  return spec != nullptr && spec->is_object() ? *spec : kEmpty;
}

// Only what placement reads: a Node heartbeat must not enqueue every service.
bool PlacementRelevantChange(const Json& before, const Json& after) {
  for (const char* path : {"metadata.labels", "spec.taints", "metadata.deletionTimestamp"}) {
    const Json* a = kube::FindPath(before, path);
    const Json* b = kube::FindPath(after, path);
    if ((a == nullptr) != (b == nullptr) || (a != nullptr && *a != *b)) return true;
  }
  return false;
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
  if (context.client == nullptr || context.informers == nullptr || context.edge == nullptr) {
    return absl::InvalidArgumentError(
        "JointInferenceController: client, informers and edge are required");
  }
  std::unique_ptr<JointInferenceController> controller(new JointInferenceController(context));
  RETURN_IF_ERROR(controller->services_->AddIndexers(
      {{kModelIndex, [](const Json& object) { return ModelKeys(object); }}}));
  if (context.reports != nullptr) {
    RETURN_IF_ERROR(context.reports->Register(std::string(kKind), controller.get()));
  }
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
  kube::ResourceEventHandlerFuncs on_model;
  on_model.on_add = [this](const kube::ObjectPtr& model) { EnqueueModelReferrers(*model); };
  on_model.on_update = [this](const kube::ObjectPtr& before, const kube::ObjectPtr& after) {
    if (before->value("spec", Json()) != after->value("spec", Json())) {
      EnqueueModelReferrers(*after);
    }
  };
  on_model.on_delete = [this](const kube::DeletedObject& deleted) {
    EnqueueModelReferrers(*kube::LastKnownState(deleted));
  };
  models_->AddEventHandler(std::move(on_model));

  nodes_ = Read(kube::resources::Nodes());
  kube::ResourceEventHandlerFuncs on_node;
  on_node.on_add = [this](const kube::ObjectPtr&) { EnqueueSelectingServices(); };
  on_node.on_update = [this](const kube::ObjectPtr& before, const kube::ObjectPtr& after) {
    if (PlacementRelevantChange(*before, *after)) EnqueueSelectingServices();
  };
  on_node.on_delete = [this](const kube::DeletedObject&) { EnqueueSelectingServices(); };
  nodes_->AddEventHandler(std::move(on_node));
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
    if (SelectsNodes(SpecOf(*service, "edgeWorker"))) Enqueue(kube::Key(*service));
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
  Json spec_only = object;
  spec_only.erase("status");
  absl::StatusOr<api::JointInferenceService> parsed = api::JointInferenceService::FromJson(spec_only);
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
  const Json& edge_spec = SpecOf(object, "edgeWorker");
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
  auto url_of = [&](const std::string& name, std::string* url) {
    absl::StatusOr<kube::ObjectPtr> model = models_->GetLister().Get(ns, name);
    if (!model.ok()) {
      missing.push_back(absl::StrCat("model \"", name, "\" not found in namespace ", ns));
      return;
    }
    *url = kube::StringAt(**model, "spec.url");
  };
  url_of(plan.service.spec.edge_worker.model.name, &urls.edge);
  if (plan.service.spec.cloud_worker.model.name != plan.service.spec.edge_worker.model.name ||
      missing.empty()) {
    url_of(plan.service.spec.cloud_worker.model.name, &urls.cloud);
  }
  if (!missing.empty()) {
    std::sort(missing.begin(), missing.end());
    missing.erase(std::unique(missing.begin(), missing.end()), missing.end());
    plan.kind = Plan::Kind::kWaiting;
    plan.message = absl::StrCat(Lines(missing), "; waiting for it to be created");
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
  absl::StatusOr<kube::ObjectPtr> got = services_->GetLister().GetByKey(key);
  if (!got.ok()) {
    if (!absl::IsNotFound(got.status())) return got.status();
    RETURN_IF_ERROR(Forget(key));
    return kube::ReconcileResult{};
  }
  const kube::ObjectPtr& object = *got;
  if (kube::IsBeingDeleted(*object)) {
    RETURN_IF_ERROR(Forget(key));
    return kube::ReconcileResult{};
  }

  Plan plan = MakePlan(*object);
  if (plan.kind == Plan::Kind::kInvalid || plan.kind == Plan::Kind::kWaiting) {
    // Nothing is created or changed; what runs keeps running on the last valid spec. Retrying
    // cannot help: the user's edit (or the Model appearing) enqueues the service again.
    const bool invalid = plan.kind == Plan::Kind::kInvalid;
    JiState state;
    if (HasWorkers(*object)) {
      state = StateOf(*object, plan.children);
    } else {
      state.phase = std::string(invalid ? api::ji_phases::kFailed : api::ji_phases::kPending);
      state.reason = std::string(invalid ? kInvalidSpecReason : reasons::kModelNotFound);
      state.message = plan.message;
    }
    RETURN_IF_ERROR(WriteState(object, state,
                               invalid ? kInvalidSpecReason : reasons::kModelNotFound,
                               plan.message));
    return kube::ReconcileResult{};
  }

  if (MissingChild(*object, plan.children) && MayHaveLostChildren(*object)) {
    // Deleting the service garbage-collects its children, and their deletions can reach us before
    // the service's own: recreating them from the stale cache would leave orphans behind. So a
    // child is only re-created while the service (this uid) still exists and is not being
    // deleted; otherwise its deletion event follows and forgets it.
    ASSIGN_OR_RETURN(const bool exists, StillExists(*object));
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
  JiState state = StateOf(*object, plan.children);
  if (!problems.empty()) {
    // The children cannot be had as the spec says: the user must act (SpecValid=False).
    if (state.phase != api::ji_phases::kRunning) {
      state.phase = std::string(api::ji_phases::kFailed);
      state.reason = std::string(kInvalidSpecReason);
      state.message = Lines(problems);
    }
    RETURN_IF_ERROR(WriteState(object, state, kInvalidSpecReason, Lines(problems)));
  } else {
    RETURN_IF_ERROR(WriteState(object, state, "", ""));
  }
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

absl::Status JointInferenceController::WriteState(const kube::ObjectPtr& object,
                                                  const JiState& state,
                                                  std::string_view spec_reason,
                                                  std::string_view spec_message) {
  const Json& obj = *object;
  const absl::Time now = context().clock->Now();
  absl::StatusOr<StatusWrite> write = WriteStatus(
      *context().client, Services(), kube::Namespace(obj), kube::Name(obj), kube::Uid(obj),
      [&](const Json& current, Json* status) -> absl::Status {
        (*status)["phase"] = state.phase;
        (*status)["active"] = state.active;
        (*status)["failed"] = state.failed;
        (*status)["observedGeneration"] = kube::Generation(current);
        if (!status->contains("startTime") || !(*status)["startTime"].is_string()) {
          (*status)["startTime"] = kube::FormatTimestamp(now);
        }
        api::FieldReader reader;
        std::vector<api::Condition> conditions = api::ReadConditions(*status, "status", &reader);
        if (!reader.ok()) conditions.clear();  // Malformed: ours to rewrite.
        // SpecValid (one entry, first) apart from the phase history (newest last: Sedna's
        // readers look at the last condition); together at most kMaxConditions (the CRD's
        // maxItems), or the API server would refuse every status write.
        Json spec_valid = Json::object();
        std::vector<api::Condition> phases;
        for (api::Condition& c : conditions) {
          if (c.type == kSpecValidCondition) {
            spec_valid["conditions"] = Json::array({c.ToJson()});
          } else {
            phases.push_back(std::move(c));
          }
        }
        if (!spec_reason.empty()) {
          SetStatusCondition(&spec_valid, kSpecValidCondition, condition_status::kFalse,
                             spec_reason, spec_message, now);
        } else if (ConditionIs(spec_valid, kSpecValidCondition, condition_status::kFalse)) {
          SetStatusCondition(&spec_valid, kSpecValidCondition, condition_status::kTrue,
                             kValidReason, "", now);
        }
        Json list = spec_valid.value("conditions", Json::array());
        const size_t max_phases = api::kMaxConditions - list.size();
        api::Condition condition;
        condition.type = state.phase;
        condition.status = "True";
        condition.reason = state.reason;
        condition.message = state.message;
        api::AppendCondition(&phases, std::move(condition), now, max_phases);
        if (phases.size() > max_phases) {
          phases.erase(phases.begin(), phases.end() - static_cast<std::ptrdiff_t>(max_phases));
        }
        for (const api::Condition& c : phases) list.push_back(c.ToJson());
        (*status)["conditions"] = std::move(list);
        return absl::OkStatus();
      },
      object);
  if (!write.ok()) {
    if (absl::IsNotFound(write.status())) return absl::OkStatus();  // Gone meanwhile.
    return write.status();
  }
  if (!write->written) return absl::OkStatus();

  const Json& before = write->before;
  const std::string key = kube::Key(obj);
  if (!spec_reason.empty()) {
    AnnounceSpecInvalid(context(), Services(), *write, spec_reason, spec_message);
  }
  const std::string old_phase = before.value("phase", std::string());
  if (old_phase != state.phase) {
    LOG(INFO) << "jointinferenceservice " << key << ": " << (old_phase.empty() ? "-" : old_phase)
              << " -> " << state.phase << " (" << state.reason << ": " << state.message << ")";
    if (state.phase == api::ji_phases::kRunning) {
      Record(write->object, kube::EventType::kNormal,
             old_phase == api::ji_phases::kFailed ? reasons::kRecovered : reasons::kRunning,
             state.message);
    } else if (state.phase == api::ji_phases::kFailed && state.reason == reasons::kWorkerFailed) {
      Record(write->object, kube::EventType::kWarning, reasons::kWorkerFailed, state.message);
    }
  }
  return absl::OkStatus();
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
  absl::StatusOr<std::vector<api::Metric>> metrics =
      MetricsFromOwnerInfo(report.worker().owner_info_json());
  if (!metrics.ok()) {
    return ReportOutcome::Rejected(
        "Invalid", absl::StrCat("report ", report.seq(), " of worker ",
                                report.worker().worker_name(), ": ", metrics.status().message()));
  }
  const std::string placed_uid = placements_.Uid(key);
  const bool gone = placed_uid.empty() || (!ref.uid().empty() && placed_uid != ref.uid());
  if (gone || !placements_.Holds(key, node)) {
    return ReportOutcome::Rejected(
        gone ? "ObjectGone" : "NotThisNode",
        absl::StrCat("jointinferenceservice ", key,
                     gone ? " is not (or no longer) on any edge node"
                          : absl::StrCat(" has no edge worker on node ", ToAbsl(node))));
  }
  if (metrics->empty()) return ReportOutcome::Accepted();  // Sedna: no ownerInfo, nothing to do.

  Json metrics_json = Json::array();
  for (const api::Metric& m : *metrics) metrics_json.push_back(m.ToJson());
  kube::ObjectPtr cached;
  if (absl::StatusOr<kube::ObjectPtr> hit = services_->GetLister().GetByKey(key); hit.ok()) {
    cached = *std::move(hit);
  }
  absl::StatusOr<StatusWrite> write = WriteStatus(
      *context().client, Services(), ref.namespace_(), ref.name(), ref.uid(),
      [&](const Json&, Json* status) -> absl::Status {
        (*status)["metrics"] = metrics_json;
        return absl::OkStatus();
      },
      cached);
  if (!write.ok()) {
    return ReportWriteFailure("jointinferenceservice", key, node, report, write.status());
  }
  LOG(DEBUG) << "jointinferenceservice " << key << ": metrics from node " << node << " (report "
             << report.seq() << ")" << (write->written ? " written" : " unchanged");
  return ReportOutcome::Accepted();
}

absl::StatusOr<std::unique_ptr<GmController>> MakeJointInferenceController(
    ControllerContext& context) {
  return CreateIfServed(context, Services(), &JointInferenceController::Create);
}

}  // namespace nereid::gm
