#pragma once

// Which GM replica serves a node's stream when edge streams are sharded over the replicas
// (globalmanager/edge_shards.h). The hub and the relay ask it at each node's Hello.

#include <string>
#include <string_view>

namespace nereid::gm {

class NodeOwnership {
 public:
  virtual ~NodeOwnership() = default;
  // HOST:PORT of the edge hub of the live replica that owns `node`, when that is another replica;
  // "" when this replica owns it or no owner is known (then this replica serves it).
  virtual std::string OwnerElsewhere(std::string_view node) const = 0;
};

}  // namespace nereid::gm
