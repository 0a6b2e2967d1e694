#include "globalmanager/controllers/inference_job_controller.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/api/model.h"
#include "common/api/sedna_contract.h"
#include "common/job/expected_delete.h"
#include "common/log/log.h"
#include "common/status/macros.h"
#include "common/strings/absl_compat.h"
#include "globalmanager/controllers/controller_events.h"
#include "globalmanager/controllers/edge_dispatcher.h"
#include "globalmanager/controllers/edge_objects.h"
#include "globalmanager/controllers/inference_job_status.h"
#include "globalmanager/controllers/informer_handlers.h"
#include "globalmanager/controllers/joint_inference_status.h"
#include "globalmanager/controllers/library_job_status.h"
#include "globalmanager/controllers/model_requirements.h"
#include "globalmanager/controllers/model_resolver.h"
#include "globalmanager/controllers/s3_credentials.h"
#include "globalmanager/controllers/placement.h"
#include "globalmanager/controllers/spec_validity.h"
#include "globalmanager/controllers/status_writer.h"
#include "globalmanager/controllers/worker_metrics_report.h"
#include "globalmanager/controllers/worker_template.h"

namespace nereid::gm {
namespace {

using kube::Json;
using kube::ObjectPtr;
namespace v1 = edge::v1;

constexpr char kModelIndex[] = "inference-job-models";

}  // namespace

absl::StatusOr<std::unique_ptr<InferenceJobController>> InferenceJobController::Create(
    const ControllerContext& context, const InferenceJobKind& kind,
    job::JobReconcilerOptions options) {
  RETURN_IF_ERROR(
      context.RequireClientInformersEdge(absl::StrCat(ToAbsl(kind.kind), " controller")));
  if (kind.resource == nullptr || kind.plan == nullptr) {
    return absl::InvalidArgumentError("InferenceJobKind needs a resource and a plan");
  }
  std::unique_ptr<InferenceJobController> controller(
      new InferenceJobController(context, kind, options));
  // The Model a job refers to, from its plan (an invalid job waits for its user's edit, not for
  // a Model).
  kube::Indexers indexers;
  indexers[kModelIndex] = [plan_of = kind.plan](const Json& object) -> std::vector<std::string> {
    absl::StatusOr<InferenceJobPlan> plan = plan_of(object);
    if (!plan.ok() || plan->model_name.empty()) return {};
    return {kube::MakeKey(kube::Namespace(object), plan->model_name)};
  };
  RETURN_IF_ERROR(controller->jobs_->AddIndexers(std::move(indexers)));
  RETURN_IF_ERROR(RegisterReportSink(context, kind.kind, controller.get()));
  return controller;
}

InferenceJobController::InferenceJobController(const ControllerContext& context,
                                               const InferenceJobKind& kind,
                                               job::JobReconcilerOptions options)
    : LibraryJobController(std::string(kind.name), context, *kind.resource, kind.kind,
                           {.reconcile = options}),
      kind_(kind),
      models_(Read(api::resources::Models())),
      nodes_(Read(kube::resources::Nodes())),
      placements_(context.edge, api::LowerKind(kind.kind)) {
  // A Model a job refers to appeared, changed its spec or went away.
  models_->AddEventHandler(OnSpecChange([this](const ObjectPtr& model) {
    absl::StatusOr<std::vector<ObjectPtr>> jobs =
        jobs_->GetLister().ByIndex(kModelIndex, kube::Key(*model));
    if (!jobs.ok()) return;
    for (const ObjectPtr& job : *jobs) Enqueue(kube::Key(*job));
  }));
  // Node changes move selector-placed workers.
  nodes_->AddEventHandler(OnPlacementChange([this] { EnqueueAll(); }));
}

// Workers call Reconcile on this object: stop them before the members go away.
InferenceJobController::~InferenceJobController() { Stop(); }

void InferenceJobController::EnqueueAll() {
  for (const std::string& key : jobs_->GetLister().ListKeys()) Enqueue(key);
}

std::string InferenceJobController::Requester(const std::string& key) const {
  return absl::StrCat(ToAbsl(kind_.kind), "/", key);
}

std::set<std::string> InferenceJobController::PlacedNodes(const std::string& key) const {
  return placements_.Nodes(key);
}

absl::StatusOr<api::Model> InferenceJobController::ModelOf(const std::string& ns,
                                                           const std::string& model) const {
  absl::StatusOr<api::Model> parsed = ResolveModel(models_->GetLister(), ns, model);
  if (!parsed.ok()) return parsed.status();
  if (parsed->spec.url.empty()) {
    return absl::NotFoundError(absl::StrCat("model \"", model,
                                            "\" has no usable spec.url; waiting for a fix"));
  }
  return parsed;
}

absl::StatusOr<InferenceJobController::Worker> InferenceJobController::BuildWorker(
    const Json& object, const InferenceJobPlan& plan, const std::string& model_url,
    WorkerS3Options s3) const {
  const WorkerOwner owner = WorkerOwner::FromObject(kind_.kind, object);
  WorkerParams params;
  params.worker_type = std::string(kind_.worker_type);
  params.env = BaseWorkerEnv(owner, kind_.worker_type, context().settings.lc_server);
  if (!plan.model_name.empty()) {
    params.env.push_back({std::string(api::env::kModelName), plan.model_name});
    params.mounts.push_back({std::string(api::env::kModelUrl), {model_url}, /*read_only=*/true,
                             /*is_dir=*/false,
                             absl::StrCat("model \"", plan.model_name, "\" (spec.url)")});
  }
  if (plan.kafka) params.env.push_back({std::string(api::env::kKafkaEnabled), "true"});
  params.s3 = std::move(s3);

  // The library owns the pod's restartPolicy (its retries follow the task's policy); a template
  // that says Never (or nothing) gets Never back on the pod, so a failure makes a new pod.
  const std::string restart = api::TemplateRestartPolicy(plan.job.pod_template);
  Json user_template = plan.job.pod_template;
  if (user_template.is_object() && user_template.contains("spec") &&
      user_template["spec"].is_object()) {
    user_template["spec"].erase("restartPolicy");
  }
  ASSIGN_OR_RETURN(Json built, BuildWorkerTemplate(owner, user_template, params, "spec.template"));
  Worker worker;
  worker.pod_restart_never = restart != "OnFailure";
  worker.template_hash = ContentHash(Json{built, worker.pod_restart_never});
  worker.pod_template = std::move(built);
  return worker;
}

absl::StatusOr<InferenceJobController::Worker> InferenceJobController::WorkerFor(
    const std::string& key, const Json& object, const InferenceJobPlan& plan, bool started,
    std::optional<CredentialProblem>* problem) {
  problem->reset();
  std::string model_url;
  WorkerS3Options s3;
  if (!plan.model_name.empty()) {
    absl::StatusOr<api::Model> model = ModelOf(kube::Namespace(object), plan.model_name);
    if (!model.ok()) {
      if (!absl::IsNotFound(model.status()) || !started) return model.status();
      // The Model went away after the job started: its pods were built with the url the Model
      // had, so the job goes on with that worker (and its status keeps following the pods)
      // rather than stopping in Waiting. Not for another spec or a re-created job, and not after
      // a GM restart (nothing remembered): those wait for the Model.
      Worker worker;
      bool news = false;
      {
        absl::MutexLock lock(&mu_);
        auto last = built_.find(key);
        if (last == built_.end() || last->second.uid != kube::Uid(object) ||
            last->second.generation != kube::Generation(object)) {
          return model.status();
        }
        worker = last->second.worker;
        news = !std::exchange(last->second.model_gone_told, true);
      }
      if (news) {
        const std::string message =
            absl::StrCat("model \"", plan.model_name,
                         "\" is gone; the started job goes on with its worker as built");
        LOG(INFO) << kind_.name << " " << key << ": " << message;
        RecordEvent(context(), *kind_.resource, object, kube::EventType::kWarning,
                    kModelNotFound, message);
      }
      return worker;
    }
    model_url = model->spec.url;
    // The Model's Secret (s3:// models only), for the storage-initializer and its env.
    CredentialProblem unreadable;
    absl::StatusOr<WorkerS3Options> read = ReadModelS3(context(), kube::Namespace(object),
                                                       model_url, model->spec.credential_name,
                                                       &unreadable);
    if (!read.ok()) {
      *problem = std::move(unreadable);
      return read.status();
    }
    s3 = *std::move(read);
  }
  ASSIGN_OR_RETURN(Worker worker, BuildWorker(object, plan, model_url, std::move(s3)));
  absl::MutexLock lock(&mu_);
  built_[key] = {kube::Uid(object), kube::Generation(object), worker};
  return worker;
}

absl::Status InferenceJobController::WaitForModel(const std::string& key, const ObjectPtr& object,
                                                  std::string_view reason,
                                                  const std::string& message) {
  const Json& obj = *object;
  InferenceJobStatusUpdate update;
  update.generation = kube::Generation(obj);
  update.waiting_for_model = message;
  update.waiting_reason = std::string(reason);
  update.now = context().clock->Now();
  ASSIGN_OR_RETURN(std::optional<StatusWrite> write,
                   WriteLibraryJobStatus(
                       *context().client, *kind_.resource,
                       job::JobIdentity::FromObject(obj, *kind_.resource), object,
                       [&](Json* status) { ApplyInferenceJobStatus(update, status); },
                       expectations_, key));
  if (write.has_value()) AnnounceSpecInvalid(context(), *kind_.resource, *write, reason, message);
  LOG(DEBUG) << kind_.name << " " << key << ": " << message;
  return absl::OkStatus();
}

void InferenceJobController::RestartStalePods(const std::string& key, const Json& object,
                                              const std::vector<ObjectPtr>& pods,
                                              const std::string& hash,
                                              absl::Status* delete_error) {
  const int deleted = job::DeletePodsExpected(*context().client, expectations_, key,
                                              job::StalePods(pods, kTemplateHashAnnotation, hash),
                                              delete_error);
  if (deleted == 0) return;
  const std::string message =
      absl::StrCat("the spec changed: recreating ", deleted, " pod(s) from the new template");
  LOG(INFO) << kind_.name << " " << key << ": " << message;
  RecordEvent(context(), *kind_.resource, object, kube::EventType::kNormal,
              inference_job_reasons::kSpecChanged, message);
}

bool InferenceJobController::IsEdgeNode(const std::string& node) const {
  absl::StatusOr<ObjectPtr> cached = nodes_->GetLister().Get("", node);
  return cached.ok() && kube::Labels(**cached).contains(std::string(kEdgeNodeRoleLabel));
}

absl::Status InferenceJobController::Place(const std::string& key, const Json& object,
                                           const InferenceJobPlan& plan,
                                           const Json& pod_template,
                                           const std::vector<ObjectPtr>& pods, bool finished) {
  std::set<std::string> nodes;
  const Json* pod_spec = kube::FindPath(pod_template, "spec");
  const std::string pinned = kube::StringAt(pod_template, "spec.nodeName");
  const bool selects = pod_spec != nullptr && (SelectsNodes(*pod_spec) || !pinned.empty());
  if (!finished && selects) {
    absl::StatusOr<Placement> placement = PlacePodSpec(*pod_spec, nodes_->GetLister());
    if (placement.ok()) {
      nodes.insert(placement->nodes.begin(), placement->nodes.end());
    } else {
      LOG(WARNING) << kind_.name << " " << key << ": node selection: " << placement.status();
    }
  }
  std::map<std::string, std::vector<std::string>> pods_on;
  for (const ObjectPtr& pod : pods) {
    const std::string node = kube::StringAt(*pod, "spec.nodeName");
    if (node.empty() || kube::IsBeingDeleted(*pod)) continue;
    if (!selects && !IsEdgeNode(node)) continue;  // A cloud pod: no LC serves it.
    nodes.insert(node);
    pods_on[node].push_back(kube::Name(*pod));
  }
  if (context().models != nullptr) {
    std::vector<ModelNeed> needs;
    if (!plan.model_name.empty()) {
      for (const std::string& node : nodes) {
        needs.push_back({kube::MakeKey(kube::Namespace(object), plan.model_name), node});
      }
    }
    context().models->SetRequirements(Requester(key), needs);
  }

  const v1::ObjectRef ref = EdgeRef(kind_.kind, object);
  std::map<std::string, v1::Resource> resources;
  for (const std::string& node : nodes) {
    v1::InferenceJobSpec spec;
    spec.set_node_name(node);
    spec.set_worker_type(std::string(kind_.worker_type));
    std::vector<std::string>& names = pods_on[node];
    std::sort(names.begin(), names.end());
    for (const std::string& name : names) spec.add_pods(name);
    v1::Resource& resource = resources[node];
    *resource.mutable_ref() = ref;
    // The node's pods are in the version: a pod added or gone there is news to its LC.
    resource.set_version(
        absl::StrCat(EdgeVersion(object), "-", ContentHash(Json(names)).substr(0, 8)));
    if (kind_.kind == api::kinds::kVideoAnalyticsJob) {
      *resource.mutable_video_analytics_job() = std::move(spec);
    } else {
      *resource.mutable_reid_job() = std::move(spec);
    }
  }
  return placements_.Sync(key, resources);
}

absl::Status InferenceJobController::Forget(const std::string& key) {
  expectations_.Delete(key);
  {
    absl::MutexLock lock(&mu_);
    built_.erase(key);
  }
  if (context().models != nullptr) context().models->ReleaseAll(Requester(key));
  return placements_.Forget(key);
}

absl::Status InferenceJobController::PrimeEdge() {
  int placed = 0;
  for (const ObjectPtr& object : jobs_->GetLister().List()) {
    if (kube::IsBeingDeleted(*object)) continue;
    absl::StatusOr<InferenceJobPlan> plan = kind_.plan(*object);
    if (!plan.ok()) continue;
    // Only the node selection of the template matters here: no Secret is read.
    std::string model_url;
    if (!plan->model_name.empty()) {
      absl::StatusOr<api::Model> model = ModelOf(kube::Namespace(*object), plan->model_name);
      if (!model.ok()) continue;
      model_url = model->spec.url;
    }
    absl::StatusOr<Worker> worker = BuildWorker(*object, *plan, model_url, {});
    if (!worker.ok()) continue;
    const job::JobIdentity id = job::JobIdentity::FromObject(*object, *kind_.resource);
    RETURN_IF_ERROR(Place(kube::Key(*object), *object, *plan, worker->pod_template,
                          children_.Pods(id), ReadInferenceJobLibraryStatus(*object).IsFinished()));
    ++placed;
  }
  LOG(INFO) << kind_.name << " controller: " << placed << " jobs in the edge registry";
  return absl::OkStatus();
}

absl::StatusOr<kube::ReconcileResult> InferenceJobController::Reconcile(const std::string& key) {
  ASSIGN_OR_RETURN(const ObjectPtr object, LiveOrForget(jobs_, key, [&] { return Forget(key); }));
  if (object == nullptr) return kube::ReconcileResult{};
  const Json& obj = *object;

  // 1. The spec. Nothing is created for one that cannot work; the user's edit re-reconciles.
  absl::StatusOr<InferenceJobPlan> plan = kind_.plan(obj);
  if (!plan.ok()) {
    RETURN_IF_ERROR(RecordSpecInvalid(context(), *kind_.resource, object,
                                      kube::Causes(plan.status())));
    return kube::ReconcileResult{};
  }
  // 2. The Model and 3. the worker template.
  const job::JobIdentity id = job::JobIdentity::FromObject(obj, *kind_.resource);
  const job::JobStatus prior = ReadInferenceJobLibraryStatus(obj);
  const bool started = prior.start_time.has_value() || !children_.Pods(id).empty();
  std::optional<CredentialProblem> unreadable;
  absl::StatusOr<Worker> worker = WorkerFor(key, obj, *plan, started, &unreadable);
  if (!worker.ok()) {
    if (unreadable.has_value()) {  // The Model's Secret; Secrets are not watched.
      RETURN_IF_ERROR(WaitForModel(key, object, unreadable->reason, unreadable->message));
      return kube::ReconcileResult{.requeue_after = kCredentialRecheckPeriod};
    }
    if (absl::IsNotFound(worker.status())) {  // The Model.
      RETURN_IF_ERROR(
          WaitForModel(key, object, kModelNotFound, std::string(worker.status().message())));
      return kube::ReconcileResult{};
    }
    if (!absl::IsInvalidArgument(worker.status())) return worker.status();
    RETURN_IF_ERROR(RecordSpecInvalid(context(), *kind_.resource, object,
                                      kube::Causes(worker.status())));
    return kube::ReconcileResult{};
  }
  RETURN_IF_ERROR(RecordSpecValid(context(), *kind_.resource, object));

  // 4. Spec change. The expectations first, then the pod cache (as the library does).
  absl::Status sync_error;
  if (!prior.IsFinished() && expectations_.Satisfied(key, kube::ResourceVersion(obj))) {
    RestartStalePods(key, obj, children_.Pods(id), worker->template_hash, &sync_error);
  }

  // 5. The common job library.
  job::JobRequest request;
  request.object = &obj;
  request.resource = kind_.resource;
  const api::InlineJobSpec& js = plan->job;
  request.spec.run_policy.backoff_limit = js.backoff_limit;
  request.spec.run_policy.active_deadline_seconds = js.active_deadline_seconds;
  if (js.ttl_seconds_after_finished.has_value()) {
    request.spec.run_policy.ttl_seconds_after_finished = *js.ttl_seconds_after_finished;
  }
  request.spec.run_policy.suspend = js.suspend.value_or(false);
  job::Task task;
  task.name = std::string(kind_.worker_type);
  task.type = job::TaskType::kNone;
  task.replicas = js.Completions();
  task.pod_template = worker->pod_template;
  task.restart_policy = job::RestartPolicy::kOnFailure;
  request.spec.tasks.push_back(std::move(task));
  request.status = prior;
  request.labels = WorkerOwner::FromObject(kind_.kind, obj).WorkerLabels(kind_.worker_type);
  const Worker& w = *worker;
  request.decorate_pod = [&w](const job::JobIdentity&, const job::PodPlace&, Json* pod) {
    (*pod)["metadata"]["annotations"][std::string(kTemplateHashAnnotation)] = w.template_hash;
    if (w.pod_restart_never) (*pod)["spec"]["restartPolicy"] = "Never";
  };
  ASSIGN_OR_RETURN(job::JobResult result, engine_.Reconcile(request));
  if (result.job_deleted) {
    RETURN_IF_ERROR(Forget(key));
    return kube::ReconcileResult{};
  }
  if (sync_error.ok()) sync_error = result.sync_error;
  const job::JobStatus& status = result.status;
  const bool finished = status.IsFinished();

  // 6. Sedna's Service, while the job runs.
  const bool suspended = status.IsConditionTrue(job::condition_types::kSuspended);
  if (!result.skipped && !finished && !suspended) {
    absl::Status s =
        EnsureWorkerService(key, obj, kind_.worker_type, kind_.service_port, children_.Services(id));
    if (sync_error.ok()) sync_error = s;
  }
  // 7. Edge.
  RETURN_IF_ERROR(Place(key, obj, *plan, worker->pod_template, children_.Pods(id), finished));

  // A skipped pass (the caches lag our own writes) computed nothing worth writing.
  if (result.skipped) {
    if (!sync_error.ok()) return sync_error;
    return kube::ReconcileResult{.requeue_after = result.requeue_after};
  }
  // 8. Status.
  InferenceJobStatusUpdate update;
  update.job = &status;
  update.generation = kube::Generation(obj);
  update.now = context().clock->Now();
  ASSIGN_OR_RETURN(
      std::optional<StatusWrite> write,
      WriteJobStatus(key, object, [&](Json* st) { ApplyInferenceJobStatus(update, st); }));
  if (!write.has_value()) return kube::ReconcileResult{};  // Gone meanwhile.
  if (write->written) {
    LOG(DEBUG) << kind_.name << " " << key << ": status written (phase "
               << kube::StringAt(write->after, "phase") << ")";
  }
  if (!sync_error.ok()) return sync_error;
  return kube::ReconcileResult{.requeue_after = result.requeue_after};
}

ReportOutcome InferenceJobController::HandleReport(std::string_view node,
                                                   const v1::StatusReport& report) {
  const v1::ObjectRef& ref = report.ref();
  const std::string key = kube::MakeKey(ref.namespace_(), ref.name());
  if (ref.kind() != kind_.kind || !report.has_worker()) {
    return RejectedPayload(report, absl::StrCat("a worker report of a ", ToAbsl(kind_.kind)));
  }
  std::vector<api::Metric> metrics;
  if (std::optional<ReportOutcome> bad = ReadWorkerMetrics(report, &metrics)) return *bad;
  if (!kind_.reports_to_metrics) return ReportOutcome::Accepted();  // Nothing to record.
  ObjectPtr cached;
  if (absl::StatusOr<ObjectPtr> hit = jobs_->GetLister().GetByKey(key); hit.ok()) {
    cached = *std::move(hit);
  }
  return WriteWorkerMetrics(context(), *kind_.resource, std::move(cached), node, report,
                            std::move(metrics),
                            {api::kMaxInferenceJobMetrics, kMaxMetricValueBytes});
}

}  // namespace nereid::gm
