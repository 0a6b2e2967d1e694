#pragma once

#include <string_view>

#include "absl/status/status.h"
#include "nereid/edge/v1/resources.pb.h"

namespace nereid::gm {

// Optional observer of downstream delivery (e.g. for a controller's "delivered to node"
// condition or latency measurements). Called on gRPC threads without hub locks held; must not
// block.
class DeliveryListener {
 public:
  virtual ~DeliveryListener() = default;
  virtual void OnChangeAcked(std::string_view node, const edge::v1::ObjectRef& ref,
                             std::string_view version, bool removed) = 0;
  virtual void OnChangeNacked(std::string_view node, const edge::v1::ObjectRef& ref,
                              std::string_view version, const absl::Status& error) = 0;
};

}  // namespace nereid::gm
