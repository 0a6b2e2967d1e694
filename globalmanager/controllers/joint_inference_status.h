#pragma once

// What a JointInferenceService's status says, computed from its worker Deployments as the
// informer cache shows them, and its edge workers' reports turned into status.metrics.
//
// A worker Deployment is
//   available  status.availableReplicas >= 1;
//   failed     not available AND, for the generation the deployment controller observed
//              (status.observedGeneration >= metadata.generation), Progressing=False with reason
//              ProgressDeadlineExceeded (pods never became available within
//              progressDeadlineSeconds: image pull errors, crash loops, unschedulable) or
//              ReplicaFailure=True (pods cannot be created: quota, admission). A rollout in
//              progress, an empty condition list, or an old ReplicaSet still serving is never a
//              failure — Sedna #234 marked services Failed for that, and forever.
//
// Phase (recomputed on every reconcile, so Failed is not terminal: a service recovers to
// Running when its workers are healthy again):
//   Running  the cloud worker and at least one edge worker are available (with several
//            per-node edge workers the message says how many are);
//   Failed   the cloud worker failed, or no edge worker is available and one failed;
//   Pending  otherwise (being created, rolling out, scaled to 0, no edge node selected, ...).
// active = available worker Deployments, failed = failed ones (1 cloud + 1 edge per node: a
// nodeName-bound service shows x of 2, as Sedna).

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/common_types.h"
#include "common/kube/object.h"

namespace nereid::gm {

// JointInferenceService's own reasons; the phase reasons it shares with the multi-edge services are
// service_reasons (service_phase_status.h), its children's Events child_reasons (owned_children.h).
namespace ji_reasons {
inline constexpr std::string_view kNoEdgeNode = "NoEdgeNode";  // A condition reason.
inline constexpr std::string_view kEdgeNodesChanged = "EdgeNodesChanged";  // An Event.
}  // namespace ji_reasons

struct WorkerHealth {
  bool exists = false;
  bool available = false;
  bool failed = false;
  int32_t available_replicas = 0;
  int32_t desired_replicas = 0;
  std::string problem;  // why it failed / is not available ("" when fine)
};

// `deployment` may be null (not created yet / not in the cache).
WorkerHealth AssessDeployment(const kube::Json* deployment);

// The state of a long-running service kind (JointInferenceService, the multi-edge services) as
// its status shows it; service_phase_status.h writes it.
struct ServicePhaseState {
  std::string phase;  // api::ji_phases (== api::service_phases)
  std::string reason;
  std::string message;
  int32_t active = 0;
  int32_t failed = 0;
};
using JiState = ServicePhaseState;

// `edges` has one entry per expected edge Deployment (none when no node is selected).
JiState ComputeJiState(const WorkerHealth& cloud, const std::vector<WorkerHealth>& edges);

// Sedna's upstream: ownerInfo minus startTime/updateTime → [{key, value}] sorted by key; strings as
// they are, everything else as compact JSON (integral floats without ".0", as Go prints them).
// InvalidArgument when `owner_info_json` is not a JSON object (empty → no metrics).
absl::StatusOr<std::vector<api::Metric>> MetricsFromOwnerInfo(std::string_view owner_info_json);

}  // namespace nereid::gm
