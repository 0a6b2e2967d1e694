#pragma once

// EdgeDispatcher: the part of the edge hub the controllers use — say which objects a node should
// hold. Controllers depend on this interface, not on EdgeHub, so their unit tests use a fake
// (tests/globalmanager/controllers/fake_edge_dispatcher.h). Calls never block on a stream.

#include <memory>
#include <string_view>

#include "absl/status/status.h"
#include "globalmanager/edgehub/edge_hub.h"
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

// The real one: forwards to the hub's desired-state registry.
class EdgeHubDispatcher final : public EdgeDispatcher {
 public:
  explicit EdgeHubDispatcher(EdgeHub* hub) : hub_(hub) {}
  absl::Status Upsert(std::string_view node,
                      std::shared_ptr<const edge::v1::Resource> resource) override {
    return hub_->Upsert(node, std::move(resource));
  }
  absl::Status Remove(std::string_view node, const edge::v1::ObjectRef& ref) override {
    return hub_->Remove(node, ref);
  }

 private:
  EdgeHub* const hub_;
};

}  // namespace nereid::gm
