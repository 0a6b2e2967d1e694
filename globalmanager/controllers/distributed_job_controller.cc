#include "globalmanager/controllers/distributed_job_controller.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/api/json_fields.h"
#include "common/api/sedna_contract.h"
#include "common/api/validation.h"
#include "common/job/conditions.h"
#include "common/job/distributed_job.h"
#include "common/job/job_status.h"
#include "common/job/job_status_writer.h"
#include "common/job/owner_handler.h"
#include "common/job/pod_builder.h"
#include "common/kube/errors.h"
#include "common/log/log.h"
#include "common/status/macros.h"
#include "globalmanager/controllers/status_writer.h"

namespace nereid::gm {

using kube::Json;

namespace {

// Appends Sedna's worker env to every container (names a container sets itself are kept).
void AddSednaEnv(Json* pod, const job::JobIdentity& id, const std::string& lc_server) {
  Json* containers = nullptr;
  if (auto spec = pod->find("spec"); spec != pod->end() && spec->is_object()) {
    if (auto c = spec->find("containers"); c != spec->end() && c->is_array()) containers = &*c;
  }
  if (containers == nullptr) return;
  const std::vector<std::pair<std::string_view, std::string>> env = {
      {api::env::kNamespace, id.ns},
      {api::env::kJobName, id.name},
      {api::env::kWorkerName, kube::Name(*pod)},
      {api::env::kLcServer, lc_server},
  };
  for (Json& container : *containers) {
    if (!container.is_object()) continue;
    Json& list = container["env"];
    if (!list.is_array()) list = Json::array();
    for (const auto& [name, value] : env) {
      bool present = false;
      for (const Json& e : list)
        present = present || (e.is_object() && e.value("name", "") == name);
      if (!present && !value.empty())
        list.push_back({{"name", std::string(name)}, {"value", value}});
    }
  }
}

}  // namespace

DistributedJobController::DistributedJobController(DistributedJobControllerDeps deps)
    : deps_(std::move(deps)),
      engine_(deps_.client, deps_.children, deps_.expectations, deps_.gang, deps_.recorder,
              deps_.clock, deps_.options) {}

absl::StatusOr<kube::ReconcileResult> DistributedJobController::Reconcile(const std::string& key) {
  absl::StatusOr<kube::ObjectPtr> cached = deps_.jobs.GetByKey(key);
  if (absl::IsNotFound(cached.status())) {
    deps_.expectations->Delete(key);
    if (deps_.placement != nullptr) {
      deps_.placement->JobRemoved(std::string(job::kDistributedJobKind), key);
    }
    return kube::ReconcileResult{};
  }
  if (!cached.ok()) return cached.status();
  const Json& object = **cached;

  absl::StatusOr<job::DistributedJob> parsed = job::DistributedJob::FromJson(object);
  if (!parsed.ok()) {
    RETURN_IF_ERROR(FailUnparsable(*cached, parsed.status()));
    return kube::ReconcileResult{};
  }
  const job::JobIdentity id = job::JobIdentity::FromObject(object, job::DistributedJobs());

  job::JobRequest request;
  request.object = &object;
  request.resource = &job::DistributedJobs();
  request.spec = parsed->spec;
  request.status = parsed->status;
  request.labels = api::SelectorLabels(job::kDistributedJobKind, id.name, id.uid);
  const std::string lc_server = deps_.lc_server;
  request.decorate_pod = [lc_server](const job::JobIdentity& job, const job::PodPlace& place,
                                     Json* pod) {
    (*pod)["metadata"]["labels"][api::LabelKeyWorkerType(job::kDistributedJobKind)] =
        std::string(job::TaskTypeName(place.task->type));
    AddSednaEnv(pod, job, lc_server);
  };

  ASSIGN_OR_RETURN(job::JobResult result, engine_.Reconcile(request));
  if (result.status_changed) {
    RETURN_IF_ERROR(WriteJobStatus(*cached, result.status));
    LOG(DEBUG) << "distributedjob " << key << ": status written (phase " << result.status.phase
               << ")";
  }
  if (!result.skipped && !result.job_deleted) {
    ReportPlacement(id, object, parsed->spec, result.status.IsFinished());
  }
  if (!result.sync_error.ok()) return result.sync_error;
  kube::ReconcileResult out;
  out.requeue_after = result.requeue_after;
  return out;
}

absl::Status DistributedJobController::WriteJobStatus(const kube::ObjectPtr& object,
                                                      const job::JobStatus& status) {
  const Json status_json = status.ToJson();
  // The library's keys only: status.workerReports belongs to the report path
  // (distributed_job_edge.h).
  return WriteLibraryJobStatus(
             *deps_.client, job::DistributedJobs(),
             job::JobIdentity::FromObject(*object, job::DistributedJobs()), object,
             [&](Json* current) { job::PutJobStatusFields(status_json, current); },
             *deps_.expectations, kube::Key(*object))
      .status();
}

absl::Status DistributedJobController::FailUnparsable(const kube::ObjectPtr& cached,
                                                      const absl::Status& error) {
  const Json& object = *cached;
  if (const Json* current = kube::FindPath(object, "status");
      current != nullptr && current->is_object()) {
    api::FieldReader reader;  // A malformed status reads as what could be read.
    if (job::ReadJobStatus(*current, "status", &reader).IsFailed()) {
      return absl::OkStatus();  // Already reported.
    }
  }
  std::string message = api::FormatCauses(kube::Causes(error));
  if (message.empty()) message = std::string(error.message());
  absl::Time now = absl::FromUnixSeconds(absl::ToUnixSeconds(deps_.clock->Now()));
  job::JobStatus status;
  job::SetCondition(&status, job::condition_types::kCreated, job::kTrue, job::reasons::kJobCreated,
                    absl::StrCat("DistributedJob ", kube::Key(object), " is created."), now);
  job::SetCondition(&status, job::condition_types::kFailed, job::kTrue, job::reasons::kInvalidSpec,
                    message, now);
  status.phase = std::string(job::PhaseOf(status));
  status.completion_time = now;
  status.last_reconcile_time = now;
  if (deps_.recorder != nullptr) {
    deps_.recorder->Record(object, kube::EventType::kWarning, job::reasons::kInvalidSpec, message);
  }
  LOG(WARNING) << "distributedjob " << kube::Key(object) << " is invalid: " << message;
  return WriteJobStatus(cached, status);
}

void DistributedJobController::ReportPlacement(const job::JobIdentity& id, const Json& object,
                                               const job::JobSpec& spec, bool finished) {
  if (deps_.placement == nullptr) return;
  JobPlacementView view;
  view.job = id;
  view.object = &object;
  view.spec = &spec;
  view.finished = finished;
  for (const kube::ObjectPtr& pod : deps_.children->Pods(id)) {
    std::string node = kube::StringAt(*pod, "spec.nodeName");
    if (node.empty() || kube::IsBeingDeleted(*pod)) continue;
    PlacedTaskPod p;
    p.pod = kube::Name(*pod);
    p.task = kube::Label(*pod, job::labels::kTaskName).value_or("");
    p.task_type = kube::Label(*pod, job::labels::kTaskType).value_or("");
    p.index = std::atoi(kube::Label(*pod, job::labels::kTaskIndex).value_or("0").c_str());
    p.node = std::move(node);
    view.pods.push_back(std::move(p));
  }
  deps_.placement->JobPlaced(view);
}

int DistributedJobController::AnnounceAll() {
  if (deps_.placement == nullptr) return 0;
  int announced = 0;
  for (const kube::ObjectPtr& object : deps_.jobs.List()) {
    if (kube::IsBeingDeleted(*object)) continue;
    absl::StatusOr<job::DistributedJob> parsed = job::DistributedJob::FromJson(*object);
    if (!parsed.ok()) continue;
    const job::JobIdentity id = job::JobIdentity::FromObject(*object, job::DistributedJobs());
    ReportPlacement(id, *object, parsed->spec, parsed->status.IsFinished());
    ++announced;
  }
  return announced;
}

void RegisterDistributedJobHandlers(kube::Controller* controller, kube::SharedInformer* jobs,
                                    kube::SharedInformer* pods, kube::SharedInformer* services,
                                    job::Expectations* expectations) {
  jobs->AddEventHandler(controller->EnqueueHandler());
  const std::string kind(job::kDistributedJobKind);
  pods->AddEventHandler(job::ObservingOwnerHandler(controller, kind, expectations));
  services->AddEventHandler(job::ObservingOwnerHandler(controller, kind, expectations));
}

namespace {

kube::InformerOptions Scoped(const std::string& ns) {
  kube::InformerOptions options;
  options.ns = ns;
  return options;
}

}  // namespace

DistributedJobRunner::DistributedJobRunner(kube::KubeClient* client,
                                           kube::SharedInformerFactory* factory,
                                           kube::EventRecorder* recorder, Clock* clock,
                                           Options options)
    : jobs_(factory->Informer(job::DistributedJobs(), Scoped(options.ns))),
      pods_(factory->Informer(kube::resources::Pods(), Scoped(options.ns))),
      services_(factory->Informer(kube::resources::Services(), Scoped(options.ns))),
      jobs_lister_(jobs_->GetLister()),
      children_(pods_->GetLister(), services_->GetLister()),
      expectations_(clock),
      gang_(client, clock) {
  DistributedJobControllerDeps deps;
  deps.client = client;
  deps.jobs = jobs_->GetLister();
  deps.children = &children_;
  deps.expectations = &expectations_;
  deps.gang = &gang_;
  deps.recorder = recorder;
  deps.clock = clock;
  deps.placement = options.placement;
  deps.lc_server = options.lc_server;
  deps.options = options.reconcile;
  reconciler_ = std::make_unique<DistributedJobController>(std::move(deps));
  kube::ControllerOptions controller_options;
  controller_options.workers = options.workers;
  controller_options.clock = clock;
  controller_ = std::make_unique<kube::Controller>("distributedjob", reconciler_.get(),
                                                   std::move(controller_options));
  RegisterDistributedJobHandlers(controller_.get(), jobs_, pods_, services_, &expectations_);
}

DistributedJobRunner::~DistributedJobRunner() { Stop(); }

absl::Status DistributedJobRunner::Start() { return controller_->Start(informers()); }

void DistributedJobRunner::Stop() { controller_->Stop(); }

}  // namespace nereid::gm
