#pragma once

// EdgeNode (sedna.io/v1alpha1, cluster-scoped, named after the node): the edge side of one node
// as the GM's edge hub sees it, for `kubectl get en`. The GM leader creates it when the node's
// LocalController first connects and writes its status; it has no spec.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "common/api/common_types.h"
#include "common/kube/object.h"
#include "common/kube/resource.h"

namespace nereid::api {

const kube::Resource& EdgeNodesResource();

// Condition types and reasons of EdgeNode.status.conditions.
inline constexpr char kEdgeNodeConnected[] = "Connected";
inline constexpr char kEdgeNodeDatabaseWritable[] = "DatabaseWritable";
inline constexpr char kEdgeNodeObjectsHealthy[] = "ObjectsHealthy";

// A dataset or model of the node that fails.
struct EdgeNodeFailingObject {
  std::string kind;
  std::string ns;
  std::string name;
  std::string reason;
  std::string message;

  kube::Json ToJson() const;
  friend bool operator==(const EdgeNodeFailingObject&, const EdgeNodeFailingObject&) = default;
};

struct EdgeNodeStatus {
  bool connected = false;
  // When the node last connected (while connected) or disconnected (while not).
  std::optional<absl::Time> since;
  // The GM replica whose hub serves the node's stream, and whether another replica relays it.
  std::string served_by;
  bool relayed = false;
  std::string lc_version;
  std::string lc_commit;
  // From the LC's last summary (absent until one came: an LC of an earlier release sends none).
  std::optional<int64_t> datasets;
  std::optional<int64_t> models;
  std::optional<int64_t> workers;
  std::optional<int64_t> failing;
  std::optional<EdgeNodeFailingObject> first_failing;
  // Reports in the LC's outbox not yet acknowledged, only while above the GM's threshold.
  std::optional<int64_t> outbox_depth;
  // Whether the LC's database takes writes (false: disk full or I/O errors).
  std::optional<bool> database_writable;
  std::vector<Condition> conditions;

  // Every field of the status, absent ones as null, so a merge patch of it replaces the whole
  // status (a null removes what an earlier write set).
  kube::Json ToJson() const;
  friend bool operator==(const EdgeNodeStatus&, const EdgeNodeStatus&) = default;
};

}  // namespace nereid::api
