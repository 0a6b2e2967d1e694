#pragma once

// EdgeDispatcher: the part of the edge hub the controllers use — say which objects a node should
// hold. Controllers depend on this interface only, never on EdgeHub (its gRPC, sessions and
// relay): the daemon wires the real one (globalmanager/edgehub/edge_hub_dispatcher.h), their unit
// tests a fake (tests/globalmanager/controllers/fake_edge_dispatcher.h). Calls never block on a
// stream.

#include <memory>
#include <string_view>

#include "absl/status/status.h"
#include "nereid/edge/v1/resources.pb.h"

namespace nereid::gm {

class EdgeDispatcher {
 public:
  virtual ~EdgeDispatcher() = default;
  // `node` should hold `resource` (ref with uid, version, the spec for ref.kind). The same version
  // again is a no-op for a node that already holds it. The resource is immutable and shared: one
  // copy serves every node it is sent to.
  virtual absl::Status Upsert(std::string_view node,
                              std::shared_ptr<const edge::v1::Resource> resource) = 0;
  // `node` should no longer hold the object (kind/namespace/name of `ref`).
  virtual absl::Status Remove(std::string_view node, const edge::v1::ObjectRef& ref) = 0;
};

}  // namespace nereid::gm
