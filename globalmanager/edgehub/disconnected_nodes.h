#pragma once

// DisconnectedNodes: the edge nodes whose stream on this replica ended and that have not come
// back, for alerts on nodes cut off longer than N minutes:
//   nereid_edgehub_disconnected_nodes                               how many
//   nereid_edgehub_node_disconnected_timestamp_seconds{node="..."}  since when (Unix time)
// A series exists only while its node is disconnected, so a healthy fleet of 10,000 nodes costs
// nothing here. A node this replica sent to another replica (ownership moved) or that was cut off
// because this replica stopped serving streams is not disconnected: it is served elsewhere. What
// this replica never saw (a node that does not reconnect after the GM restarts) is not counted.
// Thread-safe.

#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/registry.h"

namespace nereid::gm {

class DisconnectedNodes {
 public:
  explicit DisconnectedNodes(prometheus::Registry& registry);

  // `node`'s stream ended at `at` (a later call for the same node keeps the first time).
  void Disconnected(const std::string& node, absl::Time at);
  // `node` has a stream again.
  void Connected(const std::string& node);
  // Forgets every node (this replica no longer serves streams).
  void Clear();
  std::size_t size() const;

 private:
  void RemoveLocked(const std::string& node) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  prometheus::Gauge& count_;
  prometheus::Family<prometheus::Gauge>& since_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, prometheus::Gauge*> nodes_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nereid::gm
