#include "globalmanager/controllers/multi_edge_workers.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/api/sedna_contract.h"
#include "common/api/validation.h"
#include "common/status/macros.h"
#include "common/strings/absl_compat.h"
#include "globalmanager/controllers/placement.h"

namespace nereid::gm {
namespace {

using kube::Json;

// Sets the hash annotation of a child over its spec and labels.
void StampHash(Json* child) {
  Json owned = {{"spec", (*child)["spec"]},
                {"labels", child->value("metadata", Json::object()).value("labels", Json())}};
  (*child)["metadata"]["annotations"][std::string(kTemplateHashAnnotation)] = ContentHash(owned);
}

absl::Status AddEdgeWorkers(const WorkerOwner& owner, const Json& built_template,
                            const WorkerBuild& build, std::string_view name,
                            const EdgeNodesFn& edge_nodes, ServiceChildren* children) {
  const Json* spec = kube::FindPath(built_template, "spec");
  absl::StatusOr<std::vector<std::string>> nodes =
      edge_nodes(spec != nullptr ? *spec : Json::object());
  if (!nodes.ok()) {
    kube::StatusCause cause{std::string(api::cause_reasons::kInvalid),
                            std::string(nodes.status().message()),
                            absl::StrCat(build.field, ".spec")};
    return kube::InvalidError(owner.kind, owner.name, {cause});
  }
  for (const std::string& node : *nodes) {
    children->edge_workers.push_back({node, build.worker_type, std::string(name)});
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status AddDeploymentWorker(const WorkerOwner& owner, const api::PodTemplate& user_template,
                                 WorkerBuild build, int32_t replicas, const Json& inline_extra,
                                 std::optional<int32_t> port, const EdgeNodesFn& edge_nodes,
                                 ServiceChildren* children) {
  build.params.worker_type = build.worker_type;
  ASSIGN_OR_RETURN(Json pod_template,
                   BuildWorkerTemplate(owner, user_template, build.params, build.field));
  DeploymentOptions options;
  options.replicas = replicas;
  Json deployment = BuildWorkerDeployment(owner, pod_template, build.worker_type, options);
  // What Sedna drops from the inline DeploymentSpec; the selector stays ours.
  for (const char* key :
       {"strategy", "minReadySeconds", "revisionHistoryLimit", "progressDeadlineSeconds", "paused"}) {
    if (inline_extra.is_object() && inline_extra.contains(key)) {
      deployment["spec"][key] = inline_extra[key];
    }
  }
  StampHash(&deployment);
  const std::string name = kube::Name(deployment);
  RETURN_IF_ERROR(AddEdgeWorkers(owner, pod_template, build, name, edge_nodes, children));
  children->deployments.push_back(std::move(deployment));
  children->deployment_names.push_back(
      build.display.empty() ? absl::StrCat("Deployment ", name) : build.display);
  if (port.has_value()) {
    Json service = BuildWorkerService(owner, build.worker_type, {{*port, *port, "tcp-0"}});
    StampHash(&service);
    children->services.push_back(std::move(service));
  }
  return absl::OkStatus();
}

absl::Status AddPodWorker(const WorkerOwner& owner, const api::PodTemplate& user_template,
                          WorkerBuild build, std::string_view slot, const EdgeNodesFn& edge_nodes,
                          ServiceChildren* children) {
  build.params.worker_type = build.worker_type;
  build.params.selector_labels[std::string(kWorkerSlotLabel)] = std::string(slot);
  ASSIGN_OR_RETURN(Json pod_template,
                   BuildWorkerTemplate(owner, user_template, build.params, build.field));
  Json pod = BuildWorkerPod(owner, pod_template, build.worker_type);
  StampHash(&pod);
  RETURN_IF_ERROR(AddEdgeWorkers(
      owner, pod_template, build,
      absl::StrCat(api::PodGenerateName(owner.name, build.worker_type), ToAbsl(slot)), edge_nodes,
      children));
  children->pods.push_back(std::move(pod));
  children->pod_names.push_back(build.display);
  return absl::OkStatus();
}

absl::Status AddObjectKindWorker(const WorkerOwner& owner, const api::PodTemplate& pod_template,
                                 const ObjectKindWorker& worker, int32_t replicas,
                                 const Json& inline_extra, std::string_view lc_server,
                                 const EdgeNodesFn& edge_nodes, ServiceChildren* children) {
  WorkerBuild build;
  build.worker_type = std::string(worker.worker_type);
  build.field = std::string(worker.field);
  build.params.env = ReportEnv(
      owner,
      StableWorkerName(owner, absl::StrCat(ToAbsl(worker.worker_type), "-"), worker.name_seed),
      lc_server);
  build.display = std::string(worker.display);
  return AddDeploymentWorker(owner, pod_template, std::move(build), replicas, inline_extra,
                             worker.port, edge_nodes, children);
}

absl::Status AddTrackingWorkers(const WorkerOwner& owner,
                                const std::vector<api::TemplateWorker>& tracking,
                                const std::vector<EnvVar>& urls, std::string_view lc_server,
                                const EdgeNodesFn& edge_nodes, ServiceChildren* children) {
  for (size_t i = 0; i < tracking.size(); ++i) {
    const std::string slot = std::to_string(i);
    WorkerBuild build;
    build.worker_type = std::string(api::worker_types::kTrackingWorker);
    build.field = absl::StrCat("spec.trackingWorkers[", i, "].template");
    build.params.env = ReportEnv(
        owner, StableWorkerName(owner, "trackingworker-", absl::StrCat("tracking", slot)),
        lc_server);
    build.params.env.insert(build.params.env.end(), urls.begin(), urls.end());
    build.display = absl::StrCat("tracking worker ", i);
    RETURN_IF_ERROR(AddPodWorker(owner, tracking[i].pod_template, std::move(build), slot,
                                 edge_nodes, children));
  }
  return absl::OkStatus();
}

void CheckNodeSelections(
    const std::vector<std::pair<const api::PodTemplate*, std::string>>& templates,
    std::vector<kube::StatusCause>* causes) {
  for (const auto& [pod_template, field] : templates) {
    const Json* spec = kube::FindPath(*pod_template, "spec");
    if (spec == nullptr || !spec->is_object()) continue;
    const std::string spec_field = absl::StrCat(field, ".spec");
    if (absl::Status s = ValidateNodeSelection(*spec, spec_field); !s.ok()) {
      causes->push_back(
          {std::string(api::cause_reasons::kInvalid), std::string(s.message()), spec_field});
    }
  }
}


std::string StableWorkerName(const WorkerOwner& owner, std::string_view prefix,
                             std::string_view seed) {
  // WorkerName is "<seed>worker-<5 chars>"; keep its stable 5-character suffix.
  const std::string name = WorkerName(owner, seed);
  return absl::StrCat(ToAbsl(prefix), name.substr(name.rfind('-') + 1));
}

std::string ServiceUrl(const WorkerOwner& owner, std::string_view worker_type, int port) {
  return absl::StrCat(ServiceHost(owner, api::ServiceName(owner.name, worker_type)), ":", port);
}

}  // namespace nereid::gm
