#pragma once

// The real EdgeDispatcher: forwards the controllers' Upsert/Remove to the hub's desired-state
// registry. It lives beside the hub so that the controllers, which see only the interface
// (globalmanager/controllers/edge_dispatcher.h), never include the hub's gRPC and relay headers;
// the daemon builds it and hands it to the controllers.

#include <memory>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "globalmanager/controllers/edge_dispatcher.h"
#include "globalmanager/edgehub/edge_hub.h"

namespace nereid::gm {

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
