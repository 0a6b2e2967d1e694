#include "globalmanager/controllers/object_search_controller.h"

#include <utility>

#include "common/api/object_search_service.h"
#include "common/api/sedna_contract.h"
#include "common/status/macros.h"
#include "globalmanager/controllers/registry.h"

namespace nereid::gm {
namespace {

using kube::Json;

constexpr std::string_view kKind = api::kinds::kObjectSearchService;

const kube::Resource& Services() { return api::resources::ObjectSearchServices(); }

}  // namespace

absl::StatusOr<std::unique_ptr<ObjectSearchController>> ObjectSearchController::Create(
    const ControllerContext& context) {
  if (context.client == nullptr || context.informers == nullptr || context.edge == nullptr) {
    return absl::InvalidArgumentError(
        "ObjectSearchController: client, informers and edge are required");
  }
  return std::unique_ptr<ObjectSearchController>(new ObjectSearchController(context));
}

ObjectSearchController::ObjectSearchController(const ControllerContext& context)
    : MultiEdgeServiceController("objectsearch", context, {kKind, &Services(), true}) {}

ServicePlan ObjectSearchController::MakePlan(const Json& object) const {
  Json spec_only = object;
  spec_only.erase("status");  // Only the spec decides; a malformed status is ours to rewrite.
  absl::StatusOr<api::ObjectSearchService> parsed = api::ObjectSearchService::FromJson(spec_only);
  if (!parsed.ok()) return Invalid(parsed.status(), "spec");
  const api::ObjectSearchServiceSpec& spec = parsed->spec;
  std::vector<kube::StatusCause> causes = parsed->Validate();
  std::vector<std::pair<const api::PodTemplate*, std::string>> templates = {
      {&spec.user_worker.pod_template, "spec.userWorker.template"},
      {&spec.reid_workers.pod_template, "spec.reidWorkers.template"}};
  for (size_t i = 0; i < spec.tracking_workers.size(); ++i) {
    templates.push_back({&spec.tracking_workers[i].pod_template,
                         "spec.trackingWorkers[" + std::to_string(i) + "].template"});
  }
  CheckNodeSelections(templates, &causes);
  if (!causes.empty()) return Invalid(std::move(causes));

  const WorkerOwner owner = WorkerOwner::FromObject(kKind, object);
  const std::string& lc_server = context().settings.lc_server;
  const EdgeNodesFn edge_nodes = [this](const Json& s) { return EdgeNodesOf(s); };
  ServicePlan plan;
  absl::Status added = AddReidWorkers(owner, spec.reid_workers, lc_server, edge_nodes,
                                      &plan.children);
  if (added.ok()) {
    WorkerBuild user;
    user.worker_type = std::string(api::worker_types::kUserWorker);
    user.field = "spec.userWorker.template";
    user.params.env =
        ServiceWorkerEnv(owner, StableWorkerName(owner, "userworker-", "user"), lc_server);
    user.display = "user worker";
    added = AddDeploymentWorker(owner, spec.user_worker.pod_template, std::move(user), 1,
                                Json::object(), api::ports::kUserWorker, edge_nodes,
                                &plan.children);
  }
  if (added.ok()) {
    const std::vector<EnvVar> urls = {
        {std::string(api::env::kUserWorkerUrl),
         ServiceUrl(owner, api::worker_types::kUserWorker, api::ports::kUserWorker)},
        {std::string(api::env::kEdgemeshUrl),
         ServiceUrl(owner, api::worker_types::kReidWorker, api::ports::kReidWorker)}};
    added = AddTrackingWorkers(owner, spec.tracking_workers, urls, lc_server, edge_nodes,
                               &plan.children);
  }
  if (!added.ok()) return Invalid(added, "spec");
  return plan;
}

absl::StatusOr<std::unique_ptr<GmController>> MakeObjectSearchController(
    ControllerContext& context) {
  ASSIGN_OR_RETURN(const bool served, ServedOrLogOff(context, Services()));
  if (!served) return std::unique_ptr<GmController>();
  ASSIGN_OR_RETURN(std::unique_ptr<ObjectSearchController> controller,
                   ObjectSearchController::Create(context));
  return std::unique_ptr<GmController>(std::move(controller));
}

}  // namespace nereid::gm
