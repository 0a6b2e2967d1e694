#include "globalmanager/edgehub/node_queue_depths.h"

namespace nereid::gm {

NodeQueueDepths::NodeQueueDepths(prometheus::Gauge* queued_changes,
                                 prometheus::Gauge* nodes_with_backlog,
                                 prometheus::Gauge* max_depth)
    : queued_changes_gauge_(queued_changes),
      nodes_with_backlog_gauge_(nodes_with_backlog),
      max_depth_gauge_(max_depth) {}

void NodeQueueDepths::Changed(std::size_t before, std::size_t after) {
  if (before == after) return;
  absl::MutexLock lock(&mu_);
  if (before > 0) {
    auto it = streams_by_depth_.find(before);
    if (it != streams_by_depth_.end() && --it->second == 0) streams_by_depth_.erase(it);
    --nodes_with_backlog_;
  }
  if (after > 0) {
    ++streams_by_depth_[after];
    ++nodes_with_backlog_;
  }
  queued_changes_ = queued_changes_ + after - before;
  queued_changes_gauge_->Set(static_cast<double>(queued_changes_));
  nodes_with_backlog_gauge_->Set(static_cast<double>(nodes_with_backlog_));
  max_depth_gauge_->Set(
      streams_by_depth_.empty() ? 0.0 : static_cast<double>(streams_by_depth_.rbegin()->first));
}

std::size_t NodeQueueDepths::queued_changes() const {
  absl::MutexLock lock(&mu_);
  return queued_changes_;
}

std::size_t NodeQueueDepths::nodes_with_backlog() const {
  absl::MutexLock lock(&mu_);
  return nodes_with_backlog_;
}

std::size_t NodeQueueDepths::max_depth() const {
  absl::MutexLock lock(&mu_);
  return streams_by_depth_.empty() ? 0 : streams_by_depth_.rbegin()->first;
}

}  // namespace nereid::gm
