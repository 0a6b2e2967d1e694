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
#include "common/job/pod_builder.h"
#include "common/kube/errors.h"
#include "common/log/log.h"
#include "common/status/macros.h"
#include "globalmanager/controllers/controller_events.h"
#include "globalmanager/controllers/distributed_job_edge.h"
#include "globalmanager/controllers/informer_handlers.h"
#include "globalmanager/controllers/placement.h"
#include "globalmanager/controllers/registry.h"
#include "globalmanager/controllers/report_router.h"

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

absl::StatusOr<std::unique_ptr<DistributedJobController>> DistributedJobController::Create(
    const ControllerContext& context, DistributedJobOptions options) {
  if (context.client == nullptr || context.informers == nullptr) {
    return absl::InvalidArgumentError("DistributedJobController: client and informers are required");
  }
  std::unique_ptr<DistributedJobController> controller(
      new DistributedJobController(context, std::move(options)));
  if (controller->edge_ != nullptr) {
    RETURN_IF_ERROR(
        RegisterReportSink(context, job::kDistributedJobKind, controller->edge_.get()));
  }
  return controller;
}

DistributedJobController::DistributedJobController(const ControllerContext& context,
                                                   DistributedJobOptions options)
    : LibraryJobController("distributedjob", context, job::DistributedJobs(),
                           job::kDistributedJobKind, std::move(options.library)),
      placement_(options.placement) {
  if (placement_ != nullptr || context.edge == nullptr) return;
  nodes_ = Read(kube::resources::Nodes());
  DistributedJobEdge::Options edge_options;
  edge_options.edge = context.edge;
  edge_options.client = context.client;
  edge_options.clock = context.clock;
  edge_ = std::make_unique<DistributedJobEdge>(edge_options, jobs_->GetLister(),
                                               nodes_->GetLister());
  placement_ = edge_.get();
  // An edge node's labels or taints decide which nodes a template selects: look at every job
  // again when an edge node comes, goes or changes them (not on status heartbeats; cloud nodes are
  // never selected by a template's selector).
  auto enqueue_all = [this] {
    for (const std::string& key : jobs_->GetLister().ListKeys()) Enqueue(key);
  };
  auto is_edge = [](const kube::ObjectPtr& node) {
    return node != nullptr && kube::Label(*node, kEdgeNodeRoleLabel).has_value();
  };
  nodes_->AddEventHandler(OnPlacementChange(enqueue_all, is_edge));
}

// Workers call Reconcile on this object, and the edge half: stop them before the members go away.
DistributedJobController::~DistributedJobController() { Stop(); }

absl::StatusOr<kube::ReconcileResult> DistributedJobController::Reconcile(const std::string& key) {
  absl::StatusOr<kube::ObjectPtr> cached = jobs_->GetLister().GetByKey(key);
  if (absl::IsNotFound(cached.status())) {
    expectations_.Delete(key);
    if (placement_ != nullptr) placement_->JobRemoved(std::string(job::kDistributedJobKind), key);
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
  const std::string lc_server = context().settings.lc_server;
  request.decorate_pod = [lc_server](const job::JobIdentity& job, const job::PodPlace& place,
                                     Json* pod) {
    (*pod)["metadata"]["labels"][api::LabelKeyWorkerType(job::kDistributedJobKind)] =
        std::string(job::TaskTypeName(place.task->type));
    AddSednaEnv(pod, job, lc_server);
  };

  ASSIGN_OR_RETURN(job::JobResult result, engine_.Reconcile(request));
  if (result.status_changed) {
    RETURN_IF_ERROR(WriteStatusFields(*cached, result.status));
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

absl::Status DistributedJobController::WriteStatusFields(const kube::ObjectPtr& object,
                                                         const job::JobStatus& status) {
  const Json status_json = status.ToJson();
  // The library's keys only: status.workerReports belongs to the report path
  // (distributed_job_edge.h).
  return WriteJobStatus(kube::Key(*object), object,
                        [&](Json* current) { job::PutJobStatusFields(status_json, current); })
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
  absl::Time now = absl::FromUnixSeconds(absl::ToUnixSeconds(context().clock->Now()));
  job::JobStatus status;
  job::SetCondition(&status, job::condition_types::kCreated, job::kTrue, job::reasons::kJobCreated,
                    absl::StrCat("DistributedJob ", kube::Key(object), " is created."), now);
  job::SetCondition(&status, job::condition_types::kFailed, job::kTrue, job::reasons::kInvalidSpec,
                    message, now);
  status.phase = std::string(job::PhaseOf(status));
  status.completion_time = now;
  status.last_reconcile_time = now;
  RecordEvent(context(), job::DistributedJobs(), object, kube::EventType::kWarning,
              job::reasons::kInvalidSpec, message);
  LOG(WARNING) << "distributedjob " << kube::Key(object) << " is invalid: " << message;
  return WriteStatusFields(cached, status);
}

void DistributedJobController::ReportPlacement(const job::JobIdentity& id, const Json& object,
                                               const job::JobSpec& spec, bool finished) {
  if (placement_ == nullptr) return;
  JobPlacementView view;
  view.job = id;
  view.object = &object;
  view.spec = &spec;
  view.finished = finished;
  for (const kube::ObjectPtr& pod : children_.Pods(id)) {
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
  placement_->JobPlaced(view);
}

absl::Status DistributedJobController::PrimeEdge() {
  if (placement_ == nullptr) return absl::OkStatus();
  int announced = 0;
  for (const kube::ObjectPtr& object : jobs_->GetLister().List()) {
    if (kube::IsBeingDeleted(*object)) continue;
    absl::StatusOr<job::DistributedJob> parsed = job::DistributedJob::FromJson(*object);
    if (!parsed.ok()) continue;
    const job::JobIdentity id = job::JobIdentity::FromObject(*object, job::DistributedJobs());
    ReportPlacement(id, *object, parsed->spec, parsed->status.IsFinished());
    ++announced;
  }
  LOG(INFO) << "distributedjob controller: " << announced
            << " jobs looked at for the edge registry";
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<GmController>> MakeDistributedJobController(
    ControllerContext& context) {
  return CreateIfServed(context, job::DistributedJobs(), [](const ControllerContext& context) {
    return DistributedJobController::Create(context);
  });
}

}  // namespace nereid::gm
