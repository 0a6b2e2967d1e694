#pragma once

// The DesiredStateStore the cloud link writes to: commits every change to the durable store (the
// LC database) first and only then hands it to the handler of its kind, so what the monitor and
// keeper act on is always what would be restored after a crash, and a change is ACKed only once it
// is both durable and applied.

#include <map>
#include <string>

#include "localcontroller/cloudlink/desired_state_store.h"
#include "localcontroller/resource_handler.h"

namespace nereid::lc {

class DispatchingStore final : public DesiredStateStore {
 public:
  explicit DispatchingStore(DesiredStateStore* durable) : durable_(durable) {}

  // Registers the handler of `kind` (before the link starts; not thread-safe).
  void SetHandler(const std::string& kind, ResourceHandler* handler) { handlers_[kind] = handler; }
  // nullptr when the kind has none.
  ResourceHandler* HandlerFor(const std::string& kind) const;

  absl::StatusOr<std::vector<edge::v1::InventoryItem>> Inventory() override;
  absl::Status Upsert(const edge::v1::Resource& resource) override;
  absl::Status Remove(const edge::v1::ObjectRef& ref) override;
  absl::Status RecordSync(absl::Time time) override;

 private:
  DesiredStateStore* const durable_;
  std::map<std::string, ResourceHandler*> handlers_;
};

}  // namespace nereid::lc
