#pragma once

// Building the children of the multi-edge inference services (multi_edge_service.h) with Sedna's
// names, labels, ports and env (api/sedna_contract.h), so Sedna's worker images and Python SDK
// run unchanged:
//   AddDeploymentWorker  Deployment "<name>-deployment-<type>" (replicas as the spec says, the
//                        DeploymentSpec fields Sedna drops passed through) + Service
//                        "<name>-<type>" with one port "tcp-0" (port == targetPort)
//   AddPodWorker         one pod "<name>-<type>-xxxxx" for a slot (kWorkerSlotLabel)
// Each child's kTemplateHashAnnotation covers its spec and labels, so the controller sees when
// the spec asks for something else. Workers whose template pins them to edge nodes are listed in
// `edge_workers`.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/common_types.h"
#include "common/api/multi_edge_common.h"
#include "common/api/sedna_contract.h"
#include "common/kube/object.h"
#include "globalmanager/controllers/model_requirements.h"
#include "globalmanager/controllers/worker_template.h"

namespace nereid::gm {

// The label that tells a service's pods of different slots (trackingWorkers[i]) apart.
inline constexpr std::string_view kWorkerSlotLabel = "nereid.io/worker-slot";

// A worker announced to an edge node.
struct EdgeWorker {
  std::string node;
  std::string worker_type;
  std::string name;  // Unique among the service's workers (the Worker resource's name).
};

struct ServiceChildren {
  std::vector<kube::Json> deployments;
  std::vector<kube::Json> services;
  std::vector<kube::Json> pods;  // Each with kWorkerSlotLabel; generateName.
  std::vector<EdgeWorker> edge_workers;
  std::vector<ModelNeed> model_needs;
  // For the status: what the user calls each Deployment / pod slot (same order as above).
  std::vector<std::string> deployment_names;
  std::vector<std::string> pod_names;
};

// The edge nodes a template's spec pins its pods to; InvalidArgument for a malformed selection.
using EdgeNodesFn = std::function<absl::StatusOr<std::vector<std::string>>(const kube::Json&)>;

struct WorkerBuild {
  std::string worker_type;        // api::worker_types, e.g. "fe", "reidworker"
  std::string field;              // where the template is, e.g. "spec.reidWorkers.template"
  WorkerParams params;            // env, mounts; worker_type is set from above
  std::string display;            // "Deployment x" / "tracking pod 1" (status messages)
};

// Adds the Deployment (and, when `port` is set, its Service) of a worker. InvalidArgument with
// causes when the template cannot be built.
absl::Status AddDeploymentWorker(const WorkerOwner& owner, const api::PodTemplate& user_template,
                                 WorkerBuild build, int32_t replicas,
                                 const kube::Json& inline_extra, std::optional<int32_t> port,
                                 const EdgeNodesFn& edge_nodes, ServiceChildren* children);

// Adds the pod of slot `slot`.
absl::Status AddPodWorker(const WorkerOwner& owner, const api::PodTemplate& user_template,
                          WorkerBuild build, std::string_view slot, const EdgeNodesFn& edge_nodes,
                          ServiceChildren* children);

// The Deployment workers of ObjectSearchService / ObjectTrackingService: Deployment + Service
// "<name>-<worker type>" on `port`, env ReportEnv (worker_template.h) with WORKER_NAME
// "<worker type>-<5 chars>" (stable per owner and `name_seed`).
struct ObjectKindWorker {
  std::string_view worker_type;
  std::string_view field;  // where the template is
  std::string_view name_seed;
  std::string_view display;
  int32_t port = 0;
};
inline constexpr ObjectKindWorker kReidWorkers = {api::worker_types::kReidWorker,
                                                  "spec.reidWorkers.template", "reid",
                                                  "reid workers", api::ports::kReidWorker};
inline constexpr ObjectKindWorker kUserWorker = {api::worker_types::kUserWorker,
                                                 "spec.userWorker.template", "user", "user worker",
                                                 api::ports::kUserWorker};
absl::Status AddObjectKindWorker(const WorkerOwner& owner, const api::PodTemplate& pod_template,
                                 const ObjectKindWorker& worker, int32_t replicas,
                                 const kube::Json& inline_extra, std::string_view lc_server,
                                 const EdgeNodesFn& edge_nodes, ServiceChildren* children);
// One tracking pod per entry (slot = its index), with `urls` (USERWORKER_URL, EDGEMESH_URL).
absl::Status AddTrackingWorkers(const WorkerOwner& owner,
                                const std::vector<api::TemplateWorker>& tracking,
                                const std::vector<EnvVar>& urls, std::string_view lc_server,
                                const EdgeNodesFn& edge_nodes, ServiceChildren* children);
// The node selection (nodeSelector, required affinity) of each {template, field} — placement.h's
// checks, as causes.
void CheckNodeSelections(const std::vector<std::pair<const api::PodTemplate*, std::string>>& templates,
                         std::vector<kube::StatusCause>* causes);

// Sedna's WORKER_NAME "<prefix><5 chars>", stable per owner and `seed` (a Deployment's template
// must not change on every reconcile).
std::string StableWorkerName(const WorkerOwner& owner, std::string_view prefix,
                             std::string_view seed);
// "<service>.<namespace>:<port>" (USERWORKER_URL, EDGEMESH_URL).
std::string ServiceUrl(const WorkerOwner& owner, std::string_view worker_type, int port);

}  // namespace nereid::gm
