#include "localcontroller/dispatching_store.h"

namespace nereid::lc {

ResourceHandler* DispatchingStore::HandlerFor(const std::string& kind) const {
  auto it = handlers_.find(kind);
  return it == handlers_.end() ? nullptr : it->second;
}

absl::StatusOr<std::vector<edge::v1::InventoryItem>> DispatchingStore::Inventory() {
  return durable_->Inventory();
}

absl::Status DispatchingStore::Upsert(const edge::v1::Resource& resource) {
  if (absl::Status committed = durable_->Upsert(resource); !committed.ok()) return committed;
  if (ResourceHandler* handler = HandlerFor(resource.ref().kind())) handler->Apply(resource);
  return absl::OkStatus();
}

absl::Status DispatchingStore::Remove(const edge::v1::ObjectRef& ref) {
  if (absl::Status committed = durable_->Remove(ref); !committed.ok()) return committed;
  if (ResourceHandler* handler = HandlerFor(ref.kind())) handler->Forget(ref);
  return absl::OkStatus();
}

absl::Status DispatchingStore::RecordSync(absl::Time time) { return durable_->RecordSync(time); }

}  // namespace nereid::lc
