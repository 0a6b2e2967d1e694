#pragma once

// NodeQueueDepths: the per-node send queues summed up in three gauges, however many nodes there
// are (a series per node would be 10,000 series at 10,000 nodes):
//   nereid_edgehub_queued_changes        changes queued for nodes and not yet sent, all nodes
//   nereid_edgehub_nodes_with_backlog    nodes with at least one change queued
//   nereid_edgehub_node_queue_depth_max  the longest queue of one node
// Each stream reports its own queue's changes; an update is a map step under one mutex (the
// queues are bounded, so there are few distinct depths). A node whose old stream has not ended
// yet counts twice for that moment. Thread-safe.

#include <cstddef>
#include <map>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "prometheus/gauge.h"

namespace nereid::gm {

class NodeQueueDepths {
 public:
  // The gauges must outlive this.
  NodeQueueDepths(prometheus::Gauge* queued_changes, prometheus::Gauge* nodes_with_backlog,
                  prometheus::Gauge* max_depth);

  // One stream's queue went from `before` to `after` changes.
  void Changed(std::size_t before, std::size_t after);

  std::size_t queued_changes() const;
  std::size_t nodes_with_backlog() const;
  std::size_t max_depth() const;

 private:
  prometheus::Gauge* const queued_changes_gauge_;
  prometheus::Gauge* const nodes_with_backlog_gauge_;
  prometheus::Gauge* const max_depth_gauge_;
  mutable absl::Mutex mu_;
  std::map<std::size_t, std::size_t> streams_by_depth_ ABSL_GUARDED_BY(mu_);  // depth > 0
  std::size_t queued_changes_ ABSL_GUARDED_BY(mu_) = 0;
  std::size_t nodes_with_backlog_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace nereid::gm
