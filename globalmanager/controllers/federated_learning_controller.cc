#include "globalmanager/controllers/federated_learning_controller.h"

#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/api/sedna_contract.h"
#include "common/job/expected_delete.h"
#include "common/log/log.h"
#include "common/net/edge_protocol.h"
#include "common/status/macros.h"
#include "common/strings/absl_compat.h"
#include "globalmanager/controllers/controller_events.h"
#include "globalmanager/controllers/edge_dispatcher.h"
#include "globalmanager/controllers/edge_objects.h"
#include "globalmanager/controllers/federated_learning_status.h"
#include "globalmanager/controllers/informer_handlers.h"
#include "globalmanager/controllers/library_job_status.h"
#include "globalmanager/controllers/model_requirements.h"
#include "globalmanager/controllers/placement.h"
#include "globalmanager/controllers/registry.h"
#include "globalmanager/controllers/spec_validity.h"
#include "globalmanager/controllers/status_writer.h"
#include "globalmanager/controllers/worker_template.h"

namespace nereid::gm {
namespace {

using kube::Json;
using kube::ObjectPtr;
namespace v1 = edge::v1;

constexpr std::string_view kKind = api::kinds::kFederatedLearningJob;
constexpr char kDatasetIndex[] = "fl-datasets";
constexpr char kModelIndex[] = "fl-models";

const kube::Resource& Jobs() { return api::resources::FederatedLearningJobs(); }

std::vector<std::string> DatasetRefs(const Json& job) {
  std::vector<std::string> keys;
  std::optional<api::FederatedLearningJob> parsed = ReadSpec<api::FederatedLearningJob>(job);
  if (!parsed.has_value()) return keys;
  for (const api::TrainingWorker& worker : parsed->spec.training_workers) {
    if (!worker.dataset.name.empty()) {
      keys.push_back(kube::MakeKey(kube::Namespace(job), worker.dataset.name));
    }
  }
  return keys;
}

std::vector<std::string> ModelRefs(const Json& job) {
  std::vector<std::string> keys;
  std::optional<api::FederatedLearningJob> parsed = ReadSpec<api::FederatedLearningJob>(job);
  if (!parsed.has_value()) return keys;
  const api::FederatedLearningJobSpec& spec = parsed->spec;
  for (const std::string* name :
       {&spec.aggregation_worker.model.name,
        spec.pretrained_model.has_value() ? &spec.pretrained_model->name : nullptr}) {
    if (name != nullptr && !name->empty()) {
      keys.push_back(kube::MakeKey(kube::Namespace(job), *name));
    }
  }
  return keys;
}

void AppendWorkerName(Json* pod) {
  const std::string name = kube::Name(*pod);
  Json* containers = nullptr;
  if (auto spec = pod->find("spec"); spec != pod->end() && spec->is_object()) {
    if (auto c = spec->find("containers"); c != spec->end() && c->is_array()) containers = &*c;
  }
  if (containers == nullptr) return;
  for (Json& container : *containers) {
    if (!container.is_object()) continue;
    Json& env = container["env"];
    if (!env.is_array()) env = Json::array();
    bool present = false;
    for (const Json& e : env) {
      present = present || (e.is_object() && kube::StringAt(e, "name") == api::env::kWorkerName);
    }
    // The pod's name: unique per worker and what `kubectl get pods` shows (Sedna: random).
    if (!present) env.push_back({{"name", api::env::kWorkerName}, {"value", name}});
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<FederatedLearningController>> FederatedLearningController::Create(
    const ControllerContext& context, job::JobReconcilerOptions options) {
  RETURN_IF_ERROR(context.RequireClientInformersEdge("FederatedLearningController"));
  std::unique_ptr<FederatedLearningController> controller(
      new FederatedLearningController(context, options));
  kube::Indexers indexers;
  indexers[kDatasetIndex] = &DatasetRefs;
  indexers[kModelIndex] = &ModelRefs;
  RETURN_IF_ERROR(controller->jobs_->AddIndexers(std::move(indexers)));
  RETURN_IF_ERROR(RegisterReportSink(context, kKind, controller.get()));
  return controller;
}

FederatedLearningController::FederatedLearningController(const ControllerContext& context,
                                                         job::JobReconcilerOptions options)
    : LibraryJobController("federatedlearning", context, Jobs(), kKind, {.reconcile = options}),
      datasets_(Read(api::resources::Datasets())),
      models_(Read(api::resources::Models())),
      nodes_(Read(kube::resources::Nodes())),
      placements_(context.edge, "federatedlearningjob") {
  // A Dataset or Model a job refers to appeared, changed its spec or went away.
  datasets_->AddEventHandler(
      OnSpecChange([this](const ObjectPtr& obj) { EnqueueReferrers(kDatasetIndex, obj); }));
  models_->AddEventHandler(
      OnSpecChange([this](const ObjectPtr& obj) { EnqueueReferrers(kModelIndex, obj); }));
  // Node changes move selector-placed training workers.
  nodes_->AddEventHandler(OnPlacementChange([this] { EnqueueSelectorJobs(); }));
}

// Workers call Reconcile on this object: stop them before the members go away.
FederatedLearningController::~FederatedLearningController() { Stop(); }

void FederatedLearningController::EnqueueReferrers(const std::string& index,
                                                   const ObjectPtr& object) {
  absl::StatusOr<std::vector<ObjectPtr>> jobs = jobs_->GetLister().ByIndex(index, kube::Key(*object));
  if (!jobs.ok()) return;
  for (const ObjectPtr& job : *jobs) Enqueue(kube::Key(*job));
}

void FederatedLearningController::EnqueueSelectorJobs() {
  for (const ObjectPtr& job : jobs_->GetLister().List()) {
    std::optional<api::FederatedLearningJob> parsed = ReadSpec<api::FederatedLearningJob>(*job);
    if (!parsed.has_value()) continue;
    for (const api::TrainingWorker& worker : parsed->spec.training_workers) {
      if (SelectsNodes(api::TemplatePodSpec(worker.pod_template))) {
        Enqueue(kube::Key(*job));
        break;
      }
    }
  }
}

std::set<std::string> FederatedLearningController::PlacedNodes(const std::string& key) const {
  return placements_.Nodes(key);
}

FlPlanInputs FederatedLearningController::Inputs(const std::string& ns) const {
  FlPlanInputs inputs;
  kube::Lister datasets = datasets_->GetLister();
  kube::Lister models = models_->GetLister();
  inputs.dataset = [datasets, ns](std::string_view name) { return datasets.Get(ns, name); };
  inputs.model = [models, ns](std::string_view name) { return models.Get(ns, name); };
  inputs.nodes = nodes_->GetLister().List();
  inputs.lc_server = context().settings.lc_server;
  inputs.s3 = [this, ns](std::string_view secret_name, std::optional<CredentialProblem>* problem) {
    return ReadWorkerS3(context(), ns, secret_name, problem);
  };
  return inputs;
}

absl::Status FederatedLearningController::PrimeEdge() {
  int placed = 0;
  for (const ObjectPtr& object : jobs_->GetLister().List()) {
    if (kube::IsBeingDeleted(*object)) continue;
    FlPlan plan = PlanFederatedLearningJob(*object, Inputs(kube::Namespace(*object)));
    if (!plan.invalid.empty() || plan.missing.has_value() || plan.credential_problem.has_value()) {
      continue;
    }
    job::JobIdentity id = job::JobIdentity::FromObject(*object, Jobs());
    RETURN_IF_ERROR(Place(kube::Key(*object), *object, plan, children_.Pods(id)));
    ++placed;
  }
  LOG(INFO) << "federatedlearning controller: " << placed << " jobs in the edge registry";
  return absl::OkStatus();
}

absl::StatusOr<kube::ReconcileResult> FederatedLearningController::Reconcile(
    const std::string& key) {
  ASSIGN_OR_RETURN(const ObjectPtr object, LiveOrForget(jobs_, key, [&] { return Forget(key); }));
  if (object == nullptr) return kube::ReconcileResult{};
  const Json& obj = *object;

  FlPlan plan = PlanFederatedLearningJob(obj, Inputs(kube::Namespace(obj)));
  if (!plan.invalid.empty()) {
    // Nothing is created for a spec that cannot work; the user's edit (or the referenced object
    // appearing) re-reconciles. Pods of an earlier valid spec keep running.
    RETURN_IF_ERROR(RecordSpecInvalid(context(), Jobs(), object, plan.invalid));
    return kube::ReconcileResult{};
  }
  if (plan.missing.has_value()) {  // Its informer handler re-reconciles when it appears.
    RETURN_IF_ERROR(RecordSpecInvalid(context(), Jobs(), object, plan.missing->reason,
                                      plan.missing->message));
    return kube::ReconcileResult{};
  }
  if (plan.credential_problem.has_value()) {
    // A Secret the pods need cannot be read (Secrets are not watched: look again later).
    RETURN_IF_ERROR(RecordSpecInvalid(context(), Jobs(), object, plan.credential_problem->reason,
                                      plan.credential_problem->message));
    return kube::ReconcileResult{.requeue_after = kCredentialRecheckPeriod};
  }
  RETURN_IF_ERROR(RecordSpecValid(context(), Jobs(), object));

  const job::JobIdentity id = job::JobIdentity::FromObject(obj, Jobs());
  const job::JobStatus prior = ReadEmbeddedJobStatus(obj);
  absl::Status sync_error;
  // The expectations first, then the pod cache (as the library does): listed before the check,
  // the pods could predate deletes the check has just seen, and a pod deleted by the last restart
  // would look stale again (a second restart, SpecChanged twice).
  if (!prior.IsFinished() && expectations_.Satisfied(key, kube::ResourceVersion(obj))) {
    RETURN_IF_ERROR(RestartStalePods(key, object, children_.Pods(id), plan, &sync_error));
  }

  job::JobRequest request;
  request.object = &obj;
  request.resource = &Jobs();
  request.spec = plan.spec;
  request.status = prior;
  request.labels = api::SelectorLabels(kKind, id.name, id.uid);
  const std::string spec_hash = plan.spec_hash;
  request.decorate_pod = [&spec_hash](const job::JobIdentity&, const job::PodPlace&, Json* pod) {
    AppendWorkerName(pod);
    (*pod)["metadata"]["annotations"][std::string(fl::kSpecHashAnnotation)] = spec_hash;
  };
  request.success_rule = &FlTrainingSucceeded;
  // The pods RestartStalePods deleted (built from an older spec) are being replaced, not failing.
  request.replacing = [&spec_hash](const Json& pod) {
    std::optional<std::string> built_from = kube::Annotation(pod, fl::kSpecHashAnnotation);
    return built_from.has_value() && *built_from != spec_hash;
  };
  ASSIGN_OR_RETURN(job::JobResult result, engine_.Reconcile(request));
  if (result.job_deleted) {
    RETURN_IF_ERROR(Forget(key));
    return kube::ReconcileResult{};
  }
  if (sync_error.ok()) sync_error = result.sync_error;

  const job::JobStatus& status = result.status;
  const bool suspended = status.IsConditionTrue(job::condition_types::kSuspended);
  if (!result.skipped && !status.IsFinished() && !suspended && plan.TrainingPods() > 0) {
    absl::Status s = EnsureWorkerService(key, obj, api::worker_types::kAggregation,
                                         api::ports::kAggregation, children_.Services(id));
    if (sync_error.ok()) sync_error = s;
  }
  RETURN_IF_ERROR(Place(key, obj, plan, children_.Pods(id)));

  FlStatusUpdate update;
  update.job = &status;
  update.generation = kube::Generation(obj);
  update.now = context().clock->Now();
  if (plan.TrainingPods() == 0 && !plan.unplaced_workers.empty()) {
    std::vector<std::string> which;
    for (size_t i : plan.unplaced_workers) which.push_back(absl::StrCat("trainingWorkers[", i, "]"));
    update.no_nodes_message = absl::StrCat(
        "no edge node (label ", ToAbsl(kEdgeNodeRoleLabel), ") matches the node selection of ",
        absl::StrJoin(which, ", "), ": waiting for one");
  }
  // A skipped pass (the caches lag our own writes) computed nothing: writing its status would put
  // back the stale one the status fence is there to avoid (a restart's round reset is written).
  if (result.skipped) {
    if (!sync_error.ok()) return sync_error;
    return kube::ReconcileResult{.requeue_after = result.requeue_after};
  }
  ASSIGN_OR_RETURN(
      std::optional<StatusWrite> write,
      WriteJobStatus(key, object, [&](Json* st) { ApplyReconcileStatus(update, st); }));
  if (!write.has_value()) return kube::ReconcileResult{};  // Gone meanwhile.
  if (write->written) {
    const Json* before = kube::FindPath(write->before, "conditions");
    const bool was_waiting = before != nullptr && before->is_array() && !before->empty() &&
                             kube::StringAt(before->back(), "reason") == fl_reasons::kNoMatchingNodes;
    const bool first_write = before == nullptr || !before->is_array() || before->empty();
    const std::optional<api::Transmitter>& transmitter = plan.job.spec.transmitter;
    if (first_write && transmitter.has_value() && transmitter->ws && transmitter->s3.has_value()) {
      RecordEvent(context(), Jobs(), write->object, kube::EventType::kNormal,
                  fl_reasons::kWsTransmitterIgnored,
                  "spec.transmitter sets both ws and s3: s3 is used (TRANSMITTER=s3, "
                  "AGG_DATA_PATH), ws is ignored, as in Sedna");
    }
    if (!update.no_nodes_message.empty() && !was_waiting && !status.IsFinished()) {
      RecordEvent(context(), Jobs(), write->object, kube::EventType::kWarning,
                  fl_reasons::kNoMatchingNodes, update.no_nodes_message);
    }
    LOG(DEBUG) << "federatedlearningjob " << key << ": status written (phase "
               << kube::StringAt(write->after, "phase") << ")";
  }
  if (!sync_error.ok()) return sync_error;
  return kube::ReconcileResult{.requeue_after = result.requeue_after};
}

absl::Status FederatedLearningController::RestartStalePods(const std::string& key,
                                                           const ObjectPtr& object,
                                                           const std::vector<ObjectPtr>& pods,
                                                           const FlPlan& plan,
                                                           absl::Status* delete_error) {
  const Json& job = *object;
  // Terminating pods are left out: counting one would reset the new session's round and record
  // SpecChanged again on every pass until it is gone.
  const std::vector<ObjectPtr> stale =
      job::StalePods(pods, fl::kSpecHashAnnotation, plan.spec_hash);
  if (stale.empty()) return absl::OkStatus();
  {
    // From here on reports from pods of an older plan are ignored (IsStaleWorker), so none raises
    // the round again between the reset and the deletes.
    absl::MutexLock lock(&mu_);
    spec_hashes_[key] = plan.spec_hash;
  }
  // The round reset is written before any pod goes: if it fails, nothing is deleted and the next
  // pass (the pods are still stale) tries both again. Written after the deletes, a failed write
  // would lose the reset for good: the next pass finds no stale pod to tell it a restart happened.
  absl::StatusOr<StatusWrite> reset = WriteStatus(
      *context().client, Jobs(), kube::Namespace(job), kube::Name(job), kube::Uid(job),
      [](const Json&, Json* status) -> absl::Status {
        ResetRound(status);
        return absl::OkStatus();
      },
      object);
  if (!reset.ok()) {
    if (absl::IsNotFound(reset.status())) return absl::OkStatus();  // Gone: nothing to restart.
    return reset.status();
  }
  if (reset->written) expectations_.ExpectStatus(key, kube::ResourceVersion(reset->object));

  // Every pod goes: the aggregation worker's participants and the trainers' peers changed. The
  // expectations hold the next pass until the caches saw every delete, so the library recreates
  // the pods from the new plan only once the old ones are gone from the cache.
  const int deleted =
      job::DeletePodsExpected(*context().client, expectations_, key, pods, delete_error);
  const std::string message = absl::StrCat(
      "the spec changed: restarting the job's ", deleted, " pods from the new spec (",
      stale.size(), " were built from an older one)");
  LOG(INFO) << "federatedlearningjob " << key << ": " << message;
  RecordEvent(context(), Jobs(), job, kube::EventType::kNormal, fl_reasons::kSpecChanged, message);
  return absl::OkStatus();
}

absl::Status FederatedLearningController::Place(const std::string& key, const Json& job,
                                                const FlPlan& plan,
                                                const std::vector<ObjectPtr>& pods) {
  std::set<std::string> nodes = plan.TrainingNodes();
  if (!plan.aggregation_node.empty()) nodes.insert(plan.aggregation_node);
  // Pods the scheduler placed (no nodeName in their template) are announced once scheduled.
  for (const ObjectPtr& pod : pods) {
    const std::string phase = kube::StringAt(*pod, "status.phase");
    if (kube::IsBeingDeleted(*pod) || phase == "Succeeded" || phase == "Failed") continue;
    const std::string node = kube::StringAt(*pod, "spec.nodeName");
    if (!node.empty()) nodes.insert(node);
  }
  std::vector<ModelNeed> needs;
  if (!plan.pretrained_model.empty()) {
    for (const std::string& node : plan.TrainingNodes()) {
      needs.push_back({kube::MakeKey(kube::Namespace(job), plan.pretrained_model), node});
    }
  }
  if (context().models != nullptr) {
    context().models->SetRequirements(absl::StrCat(ToAbsl(kKind), "/", key), needs);
  }

  {
    absl::MutexLock lock(&mu_);
    spec_hashes_[key] = plan.spec_hash;
  }
  std::map<std::string, v1::Resource> resources;
  const v1::ObjectRef ref = EdgeRef(kKind, job);
  for (const std::string& node : nodes) {
    v1::Resource& resource = resources[node];
    *resource.mutable_ref() = ref;
    *resource.mutable_federated_learning_job() = plan.EdgeSpecFor(node);
    resource.set_version(EdgeVersion(job, resource.federated_learning_job()));
  }
  return placements_.Sync(key, resources);
}

absl::Status FederatedLearningController::Forget(const std::string& key) {
  expectations_.Delete(key);
  if (context().models != nullptr) context().models->ReleaseAll(absl::StrCat(ToAbsl(kKind), "/", key));
  {
    absl::MutexLock lock(&mu_);
    spec_hashes_.erase(key);
  }
  return placements_.Forget(key);
}

bool FederatedLearningController::IsStaleWorker(const std::string& key, const Json& job,
                                                const v1::WorkerReport& worker) const {
  if (worker.worker_name().empty()) return false;
  absl::StatusOr<ObjectPtr> pod =
      pods_->GetLister().Get(kube::Namespace(job), worker.worker_name());
  if (!pod.ok()) return false;  // Not a pod name (a user-set WORKER_NAME): cannot tell.
  std::optional<kube::OwnerReference> owner = kube::ControllerOf(**pod);
  if (!owner.has_value() || owner->uid != kube::Uid(job)) return false;
  if (kube::IsBeingDeleted(**pod)) return true;
  std::optional<absl::Time> sent = net::FromProtoTime(worker.time());
  std::optional<absl::Time> created = kube::CreationTimestamp(**pod);
  // Timestamps have second precision: only a report from a whole second earlier is stale.
  if (sent.has_value() && created.has_value() && *sent + absl::Seconds(1) <= *created) return true;
  std::string current_hash;
  {
    absl::MutexLock lock(&mu_);
    auto it = spec_hashes_.find(key);
    if (it != spec_hashes_.end()) current_hash = it->second;
  }
  std::optional<std::string> hash = kube::Annotation(**pod, fl::kSpecHashAnnotation);
  return !current_hash.empty() && hash.has_value() && *hash != current_hash;
}

ReportOutcome FederatedLearningController::HandleReport(std::string_view node,
                                                        const v1::StatusReport& report) {
  const v1::ObjectRef& ref = report.ref();
  const std::string key = kube::MakeKey(ref.namespace_(), ref.name());
  if (ref.kind() != kKind || !report.has_worker()) {
    return RejectedPayload(report, "a worker report");
  }
  absl::StatusOr<ObjectPtr> cached = jobs_->GetLister().GetByKey(key);
  if (!cached.ok() || (!ref.uid().empty() && ref.uid() != kube::Uid(**cached))) {
    // The cache may lag a just-created job; an API read settles it.
    absl::StatusOr<Json> live = context().client->Get(Jobs(), ref.namespace_(), ref.name());
    if (!live.ok() && !absl::IsNotFound(live.status())) {
      return ReportOutcome::Retry("ApiError", std::string(live.status().message()));
    }
    if (!live.ok() || (!ref.uid().empty() && ref.uid() != kube::Uid(*live))) {
      return ReportOutcome::Rejected("ObjectGone",
                                     absl::StrCat("federatedlearningjob ", key, " is gone"));
    }
    cached = std::make_shared<const Json>(*std::move(live));
  }
  const Json& job = **cached;
  const v1::WorkerReport& worker = report.worker();
  if (IsStaleWorker(key, job, worker)) {
    LOG(DEBUG) << "federatedlearningjob " << key << ": report from worker " << worker.worker_name()
               << " on node " << node << " is from an older pod; ignored";
    return ReportOutcome::Accepted();
  }
  const absl::Time at =
      net::FromProtoTime(worker.time()).value_or(context().clock->Now());

  if (std::optional<int64_t> round = ReportedRound(worker.owner_info_json())) {
    absl::StatusOr<StatusWrite> write = WriteStatus(
        *context().client, Jobs(), ref.namespace_(), ref.name(), kube::Uid(job),
        [&](const Json&, Json* status) -> absl::Status {
          ApplyRound(*round, at, status);
          return absl::OkStatus();
        },
        *cached);
    if (!write.ok()) {
      if (absl::IsNotFound(write.status())) {
        return ReportOutcome::Rejected("ObjectGone", std::string(write.status().message()));
      }
      return ReportOutcome::Retry(kube::IsConflict(write.status()) ? "Conflict" : "ApiError",
                                  std::string(write.status().message()));
    }
    if (write->written) {
      LOG(INFO) << "federatedlearningjob " << key << ": round " << *round << " (worker "
                << worker.worker_name() << " on node " << node << ")";
    }
  }

  std::vector<api::Metric> metrics = ReportedMetrics(worker.results_json());
  std::optional<api::FederatedLearningJob> parsed = ReadSpec<api::FederatedLearningJob>(job);
  const std::string model = parsed.has_value() ? parsed->spec.aggregation_worker.model.name : "";
  if (!metrics.empty() && !model.empty()) {
    absl::StatusOr<StatusWrite> write = WriteStatus(
        *context().client, api::resources::Models(), ref.namespace_(), model, "",
        [&](const Json&, Json* status) -> absl::Status {
          ApplyModelMetrics(metrics, at, status);
          return absl::OkStatus();
        });
    if (!write.ok()) {
      if (absl::IsNotFound(write.status())) {
        LOG(WARNING) << "federatedlearningjob " << key << ": model " << model
                     << " is gone; metrics from worker " << worker.worker_name() << " dropped";
        return ReportOutcome::Accepted();
      }
      return ReportOutcome::Retry(kube::IsConflict(write.status()) ? "Conflict" : "ApiError",
                                  std::string(write.status().message()));
    }
  }
  return ReportOutcome::Accepted();
}

absl::StatusOr<std::unique_ptr<GmController>> MakeFederatedLearningController(
    ControllerContext& context) {
  return CreateIfServed(context, Jobs(), [](const ControllerContext& context) {
    return FederatedLearningController::Create(context);
  });
}

}  // namespace nereid::gm
