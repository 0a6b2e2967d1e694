#pragma once

// Placement: which nodes a worker's pod template puts workers on (one worker per matching node,
// like a DaemonSet; Sedna announces only nodeName-bound workers). Shared by the
// JointInferenceService, FederatedLearningJob and Incremental/LifelongLearningJob controllers.
//
//   spec.nodeName set          → exactly that node (kNodeName), whether or not a Node object
//                                exists: the pod is bound there, as Sedna does.
//   no nodeName, but a         → one worker per matching node (kSelector): the nodes that satisfy
//   nodeSelector and/or a        - every nodeSelector label (equality),
//   required node affinity       - requiredDuringSchedulingIgnoredDuringExecution: the terms are
//                                  ORed, a term's matchExpressions and matchFields ANDed; operators
//                                  In, NotIn, Exists, DoesNotExist, Gt, Lt on labels; matchFields
//                                  only metadata.name with In/NotIn (as the scheduler); an empty or
//                                  null term matches nothing,
//                                - are edge nodes (label node-role.kubernetes.io/edge, any value)
//                                  unless PlacementOptions::edge_only is false: a worker placed
//                                  "per node" belongs on the edge, where an LC runs to serve it,
//                                - are not being deleted,
//                                - have no NoSchedule/NoExecute taint the template does not
//                                  tolerate, except the condition taints a DaemonSet tolerates
//                                  implicitly (not-ready, unreachable, pressure, unschedulable,
//                                  ...) because edge nodes flap and a worker should not be torn
//                                  down when its node briefly loses the cloud.
//                                Ready/NotReady is deliberately ignored, like a DaemonSet.
//                                preferredDuringScheduling terms do not restrict placement.
//   neither                    → kUnplaced: the scheduler picks a node; no LC can be told in
//                                advance (callers decide whether that is acceptable).
//
// Malformed selection (unknown operator, Gt with a non-integer, In with no values, matchFields on
// a field other than metadata.name) is an InvalidArgument naming the field, so callers can surface
// it through RecordSpecInvalid; nothing here throws.

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/kube/lister.h"
#include "common/kube/object.h"

namespace nereid::gm {

// The label KubeEdge's keadm puts on edge nodes.
inline constexpr std::string_view kEdgeNodeRoleLabel = "node-role.kubernetes.io/edge";

struct PlacementOptions {
  // Only nodes labelled kEdgeNodeRoleLabel are candidates for selector placement.
  bool edge_only = true;
  // Skip nodes with a NoSchedule/NoExecute taint the template does not tolerate.
  bool respect_taints = true;
};

struct Placement {
  enum class Mode { kNodeName, kSelector, kUnplaced };
  Mode mode = Mode::kUnplaced;
  // The selected node names, sorted and unique. One entry for kNodeName; possibly empty for
  // kSelector (no node matches yet); empty for kUnplaced.
  std::vector<std::string> nodes;

  friend bool operator==(const Placement&, const Placement&) = default;
};

// True when the pod spec has no nodeName but a non-empty nodeSelector or a required node affinity:
// the template is placed per matching node.
bool SelectsNodes(const kube::Json& pod_spec);

// Checks the nodeSelector and required node affinity of `pod_spec` (a PodSpec, i.e. the
// template's "spec"). `field_path` prefixes error messages (e.g. "spec.trainingWorkers[0].template.spec").
absl::Status ValidateNodeSelection(const kube::Json& pod_spec, std::string_view field_path = "spec");

// Whether `node` (a Node object) is a candidate for `pod_spec` under `options`. Ignores nodeName.
absl::StatusOr<bool> NodeMatches(const kube::Json& pod_spec, const kube::Json& node,
                                 const PlacementOptions& options = {});

// The placement of `pod_spec` over `nodes` (typically a Node lister's List()).
absl::StatusOr<Placement> PlacePodSpec(const kube::Json& pod_spec,
                                       const std::vector<kube::ObjectPtr>& nodes,
                                       const PlacementOptions& options = {});
// Same, reading the nodes from a Node informer's lister.
absl::StatusOr<Placement> PlacePodSpec(const kube::Json& pod_spec, const kube::Lister& nodes,
                                       const PlacementOptions& options = {});

}  // namespace nereid::gm
