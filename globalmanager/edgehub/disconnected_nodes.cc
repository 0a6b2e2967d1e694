#include "globalmanager/edgehub/disconnected_nodes.h"

namespace nereid::gm {

DisconnectedNodes::DisconnectedNodes(prometheus::Registry& registry)
    : count_(prometheus::BuildGauge()
                 .Name("nereid_edgehub_disconnected_nodes")
                 .Help("Edge nodes whose stream on this replica ended and that have not "
                       "reconnected (nodes sent to another replica not included)")
                 .Register(registry)
                 .Add({})),
      since_(prometheus::BuildGauge()
                 .Name("nereid_edgehub_node_disconnected_timestamp_seconds")
                 .Help("When a disconnected edge node's stream ended (Unix time); a series per "
                       "node only while it is disconnected")
                 .Register(registry)) {}

void DisconnectedNodes::Disconnected(const std::string& node, absl::Time at) {
  absl::MutexLock lock(&mu_);
  if (nodes_.contains(node)) return;
  prometheus::Gauge& since = since_.Add({{"node", node}});
  since.Set(absl::ToDoubleSeconds(at - absl::UnixEpoch()));
  nodes_.emplace(node, &since);
  count_.Set(static_cast<double>(nodes_.size()));
}

void DisconnectedNodes::Connected(const std::string& node) {
  absl::MutexLock lock(&mu_);
  RemoveLocked(node);
}

void DisconnectedNodes::Clear() {
  absl::MutexLock lock(&mu_);
  for (const auto& [node, since] : nodes_) since_.Remove(since);
  nodes_.clear();
  count_.Set(0);
}

std::size_t DisconnectedNodes::size() const {
  absl::MutexLock lock(&mu_);
  return nodes_.size();
}

void DisconnectedNodes::RemoveLocked(const std::string& node) {
  auto it = nodes_.find(node);
  if (it == nodes_.end()) return;
  since_.Remove(it->second);
  nodes_.erase(it);
  count_.Set(static_cast<double>(nodes_.size()));
}

}  // namespace nereid::gm
