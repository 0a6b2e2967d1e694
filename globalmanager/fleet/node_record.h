#pragma once

// What the GM leader knows of one node's edge side (from its hub), and the EdgeNode status it
// makes: a pure function of the record, so the writer compares fingerprints instead of keeping
// the last status it wrote.

#include <cstdint>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "common/api/edge_node.h"
#include "nereid/edge/v1/sync.pb.h"

namespace nereid::gm {

struct NodeRecord {
  // The hub's id of the stream the record describes (0: none seen by this replica).
  uint64_t stream = 0;
  bool connected = false;
  bool relayed = false;
  absl::Time since = absl::InfinitePast();  // of the last connect or disconnect
  std::string lc_version;
  std::string lc_commit;
  // The LC's last summary; kept after a disconnect (the last known state).
  std::optional<edge::v1::NodeSummary> summary;
  // When the database health, and whether anything fails, last changed.
  absl::Time database_since = absl::InfinitePast();
  absl::Time objects_since = absl::InfinitePast();
};

// Takes `summary` into `record`, moving the transition times of what changed to `now`.
void ApplySummary(NodeRecord& record, const edge::v1::NodeSummary& summary, absl::Time now);

struct StatusSettings {
  std::string replica;  // this GM replica's identity (status.servedBy)
  // status.outboxDepth is shown only from this many undelivered reports.
  int64_t outbox_threshold = 100;
};

api::EdgeNodeStatus StatusOf(const NodeRecord& record, const StatusSettings& settings);

}  // namespace nereid::gm
