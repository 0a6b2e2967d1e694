#pragma once

#include <cstdint>
#include <string_view>

#include "absl/time/time.h"
#include "nereid/edge/v1/sync.pb.h"

namespace nereid::gm {

// What a node's stream says about the node itself, as the hub serving it sees it.
struct NodeConnection {
  std::string_view node;
  // The hub's id of the stream; increases with every stream, so a listener can tell an old
  // stream's late news from the current stream's (callbacks of two streams may interleave).
  uint64_t stream = 0;
  // Another GM replica relays the stream here.
  bool relayed = false;
  std::string_view lc_version;
  std::string_view lc_commit;
  absl::Time at;
};

// Optional observer of node connections (the EdgeNode writer). Called on gRPC threads without
// hub locks held; must not block.
class NodeListener {
 public:
  virtual ~NodeListener() = default;
  // A stream's Hello was accepted: the node is served by this hub from now on.
  virtual void OnNodeConnected(const NodeConnection& connection) = 0;
  // The node's current stream `stream` ended (a stream replaced by a newer one is not reported).
  virtual void OnNodeDisconnected(std::string_view node, uint64_t stream, absl::Time at) = 0;
  // The LC of stream `stream` sent its summary (full state; each replaces the previous one).
  virtual void OnNodeSummary(std::string_view node, uint64_t stream,
                             const edge::v1::NodeSummary& summary) = 0;
};

}  // namespace nereid::gm
