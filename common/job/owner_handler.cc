#include "common/job/owner_handler.h"

#include <optional>

namespace nereid::job {

namespace {

// "ns/owner" of a child owned by `kind`, if it is.
std::optional<std::string> OwnerKey(const kube::Json& child, const std::string& kind) {
  std::optional<kube::OwnerReference> owner = kube::ControllerOf(child);
  if (!owner.has_value() || owner->kind != kind) return std::nullopt;
  return kube::MakeKey(kube::Namespace(child), owner->name);
}

}  // namespace

kube::ResourceEventHandlerFuncs ObservingOwnerHandler(kube::Controller* controller,
                                                      std::string owner_kind,
                                                      Expectations* expectations) {
  kube::ResourceEventHandlerFuncs funcs;
  funcs.on_add = [=](const kube::ObjectPtr& obj) {
    std::optional<std::string> key = OwnerKey(*obj, owner_kind);
    if (!key.has_value()) return;
    if (kube::IsBeingDeleted(*obj)) {
      expectations->DeletionObserved(*key, kube::Uid(*obj));
    } else {
      expectations->CreationObserved(*key);
    }
    controller->Enqueue(*key);
  };
  funcs.on_update = [=](const kube::ObjectPtr& old_obj, const kube::ObjectPtr& new_obj) {
    // Resync replays carry no news for expectations but still enqueue (level-based), behind news.
    const bool resync = kube::IsResync(old_obj, new_obj);
    std::optional<std::string> new_key = OwnerKey(*new_obj, owner_kind);
    std::optional<std::string> old_key = OwnerKey(*old_obj, owner_kind);
    if (new_key.has_value()) {
      if (kube::IsBeingDeleted(*new_obj))
        expectations->DeletionObserved(*new_key, kube::Uid(*new_obj));
      controller->Enqueue(*new_key, resync);
    }
    if (old_key.has_value() && old_key != new_key) controller->Enqueue(*old_key, resync);
  };
  funcs.on_delete = [=](const kube::DeletedObject& deleted) {
    kube::ObjectPtr obj = kube::LastKnownState(deleted);
    if (obj == nullptr) return;
    std::optional<std::string> key = OwnerKey(*obj, owner_kind);
    if (!key.has_value()) return;
    expectations->DeletionObserved(*key, kube::Uid(*obj));
    controller->Enqueue(*key);
  };
  return funcs;
}

}  // namespace nereid::job
