// The Store's deletion machinery beside plain removal: ownerReference garbage collection
// (Background, Foreground, Orphan), foreground owners waiting for their blocking dependents,
// namespace deletion and finalization, and a CRD taking its objects with it. It all runs
// synchronously inside the write that triggers it, so tests see the effects without waiting.

#include "tools/devapiserver/garbage_collection.h"

#include <algorithm>

#include "common/log/log.h"
#include "common/status/macros.h"
#include "tools/devapiserver/storage.h"

namespace nereid::devapi {

std::vector<std::string> Finalizers(const Json& obj) {
  std::vector<std::string> out;
  if (const Json* f = kube::FindPath(obj, "metadata.finalizers"); f && f->is_array()) {
    for (const Json& v : *f) {
      if (v.is_string()) out.push_back(v.get<std::string>());
    }
  }
  return out;
}

void SetFinalizers(Json& obj, const std::vector<std::string>& finalizers) {
  if (finalizers.empty()) {
    obj["metadata"].erase("finalizers");
  } else {
    obj["metadata"]["finalizers"] = finalizers;
  }
}

bool HasOwner(const Json& obj, const std::string& uid) {
  for (const kube::OwnerReference& ref : kube::OwnerReferences(obj)) {
    if (ref.uid == uid) return true;
  }
  return false;
}

void RemoveOwnerRef(Json& obj, const std::string& uid) {
  Json* refs = &obj["metadata"]["ownerReferences"];
  if (!refs->is_array()) return;
  Json kept = Json::array();
  for (const Json& r : *refs) {
    if (!(r.is_object() && r.value("uid", "") == uid)) kept.push_back(r);
  }
  if (kept.empty()) {
    obj["metadata"].erase("ownerReferences");
  } else {
    *refs = std::move(kept);
  }
}

std::vector<Store::Location> Store::DependentsLocked(const std::string& uid) const {
  std::vector<Location> out;
  for (const auto& [storage_key, collection] : collections_) {
    for (const auto& [key, obj] : collection) {
      if (HasOwner(*obj, uid)) out.push_back({storage_key, key});
    }
  }
  return out;
}

void Store::AfterRemovalLocked(const ResourceType& type, const Json& removed) {
  const std::string uid = kube::Uid(removed);
  // A CRD takes its objects with it.
  if (type.builtin && type.resource.resource == "customresourcedefinitions") {
    auto crd_type = TypeFromCrd(removed);
    if (crd_type.ok()) {
      std::string sk = crd_type->StorageKey();
      std::vector<std::string> keys;
      for (const auto& [key, obj] : collections_[sk]) keys.push_back(key);
      for (const std::string& key : keys) {
        if (ObjectPtr obj = FindLocked(sk, key)) {
          auto r = RemoveLocked(*crd_type, key, *obj);
          if (!r.ok()) LOG(WARNING) << "devapiserver: removing " << sk << " " << key << ": " << r.status();
        }
      }
      collections_.erase(sk);
      registry_->Remove(sk);
    }
  }
  // Garbage collection: dependents whose owners are all gone are deleted (background); a
  // dependent that still has another owner just loses the dangling reference.
  for (const Location& loc : DependentsLocked(uid)) {
    ObjectPtr dep = FindLocked(loc.storage_key, loc.key);
    ResourceTypePtr dep_type = TypeOf(loc.storage_key);
    if (dep == nullptr || dep_type == nullptr) continue;
    bool other_owner = false;
    for (const kube::OwnerReference& ref : kube::OwnerReferences(*dep)) {
      if (ref.uid != uid && uids_.count(ref.uid)) other_owner = true;
    }
    if (other_owner) {
      Json updated = *dep;
      RemoveOwnerRef(updated, uid);
      auto r = CommitLocked(*dep_type, loc.key, std::move(updated));
      if (!r.ok()) LOG(WARNING) << "devapiserver: gc " << loc.key << ": " << r.status();
    } else {
      DeleteRequest background;
      background.propagation_policy = "Background";
      auto r = DeleteLocked(*dep_type, loc.key, background);
      if (!r.ok() && !absl::IsNotFound(r.status())) {
        LOG(WARNING) << "devapiserver: gc " << loc.key << ": " << r.status();
      }
    }
  }
  // Owners waiting in foreground deletion may be free to go now.
  for (const kube::OwnerReference& ref : kube::OwnerReferences(removed)) {
    TryFinishForegroundLocked(ref.uid);
  }
  if (type.resource.namespaced) {
    std::string ns = kube::Namespace(removed);
    ObjectPtr ns_obj = FindLocked("/namespaces", ns);
    if (ns_obj != nullptr && kube::IsBeingDeleted(*ns_obj)) TryFinalizeNamespaceLocked(ns);
  }
}

void Store::TryFinishForegroundLocked(const std::string& uid) {
  auto where = uids_.find(uid);
  if (where == uids_.end()) return;
  Location loc = where->second;
  ObjectPtr owner = FindLocked(loc.storage_key, loc.key);
  ResourceTypePtr type = TypeOf(loc.storage_key);
  if (owner == nullptr || type == nullptr) return;
  std::vector<std::string> finalizers = Finalizers(*owner);
  auto fg = std::find(finalizers.begin(), finalizers.end(), kForegroundFinalizer);
  if (fg == finalizers.end()) return;
  for (const Location& dep_loc : DependentsLocked(uid)) {
    ObjectPtr dep = FindLocked(dep_loc.storage_key, dep_loc.key);
    for (const kube::OwnerReference& ref : kube::OwnerReferences(*dep)) {
      if (ref.uid == uid && ref.block_owner_deletion) return;  // still blocking
    }
  }
  finalizers.erase(fg);
  Json updated = *owner;
  SetFinalizers(updated, finalizers);
  absl::Status r = finalizers.empty() ? RemoveLocked(*type, loc.key, std::move(updated)).status()
                                      : CommitLocked(*type, loc.key, std::move(updated)).status();
  if (!r.ok()) LOG(WARNING) << "devapiserver: finishing foreground deletion of " << loc.key << ": " << r;
}

void Store::TryFinalizeNamespaceLocked(const std::string& ns) {
  std::string prefix = ns + "/";
  for (const auto& [storage_key, collection] : collections_) {
    auto it = collection.lower_bound(prefix);
    if (it != collection.end() && it->first.compare(0, prefix.size(), prefix) == 0) return;
  }
  ObjectPtr ns_obj = FindLocked("/namespaces", ns);
  if (ns_obj == nullptr) return;
  const ResourceType& ns_type = *TypeOf("/namespaces");
  Json updated = *ns_obj;
  if (updated.contains("spec")) updated["spec"].erase("finalizers");
  absl::Status s = Finalizers(updated).empty() ? RemoveLocked(ns_type, ns, std::move(updated)).status()
                                               : CommitLocked(ns_type, ns, std::move(updated)).status();
  if (!s.ok()) LOG(WARNING) << "devapiserver: finalizing namespace " << ns << ": " << s;
}

absl::StatusOr<DeleteResult> Store::DeleteNamespaceLocked(const ResourceType& type,
                                                          const std::string& key, Json marked) {
  marked["status"]["phase"] = "Terminating";
  ASSIGN_OR_RETURN(ObjectPtr stored, CommitLocked(type, key, std::move(marked)));
  const std::string prefix = key + "/";
  std::vector<Location> contents;
  for (const auto& [storage_key, collection] : collections_) {
    for (auto it = collection.lower_bound(prefix);
         it != collection.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
      contents.push_back({storage_key, it->first});
    }
  }
  for (const Location& loc : contents) {
    ResourceTypePtr t = TypeOf(loc.storage_key);
    if (t == nullptr || FindLocked(loc.storage_key, loc.key) == nullptr) continue;
    auto r = DeleteLocked(*t, loc.key, DeleteRequest{});
    if (!r.ok() && !absl::IsNotFound(r.status())) {
      LOG(WARNING) << "devapiserver: deleting " << loc.key << " in namespace " << key << ": " << r.status();
    }
  }
  TryFinalizeNamespaceLocked(key);
  ObjectPtr after = FindLocked(type.StorageKey(), key);
  return DeleteResult{after ? *after : *stored, after != nullptr};
}

absl::Status Store::OrphanDependentsLocked(const std::string& uid) {
  for (const Location& loc : DependentsLocked(uid)) {
    ObjectPtr dep = FindLocked(loc.storage_key, loc.key);
    ResourceTypePtr dep_type = TypeOf(loc.storage_key);
    if (dep == nullptr || dep_type == nullptr) continue;
    Json orphaned = *dep;
    RemoveOwnerRef(orphaned, uid);
    RETURN_IF_ERROR(CommitLocked(*dep_type, loc.key, std::move(orphaned)).status());
  }
  return absl::OkStatus();
}

absl::StatusOr<DeleteResult> Store::DeleteForegroundLocked(const ResourceType& type,
                                                           const std::string& key, Json marked,
                                                           const Json& last_state,
                                                           const std::vector<Location>& dependents) {
  const std::string uid = kube::Uid(last_state);
  std::vector<std::string> finalizers = Finalizers(marked);
  finalizers.push_back(kForegroundFinalizer);
  SetFinalizers(marked, finalizers);
  RETURN_IF_ERROR(CommitLocked(type, key, std::move(marked)).status());
  for (const Location& loc : dependents) {
    ResourceTypePtr dep_type = TypeOf(loc.storage_key);
    ObjectPtr dep = FindLocked(loc.storage_key, loc.key);
    if (dep_type == nullptr || dep == nullptr) continue;
    // Upstream's GC deletes a dependent in the foreground only if it has dependents itself.
    DeleteRequest sub;
    sub.propagation_policy = DependentsLocked(kube::Uid(*dep)).empty() ? "Background" : "Foreground";
    auto r = DeleteLocked(*dep_type, loc.key, sub);
    if (!r.ok() && !absl::IsNotFound(r.status())) {
      LOG(WARNING) << "devapiserver: foreground delete of " << loc.key << ": " << r.status();
    }
  }
  TryFinishForegroundLocked(uid);
  ObjectPtr after = FindLocked(type.StorageKey(), key);
  if (after != nullptr) return DeleteResult{*after, true};
  return DeleteResult{last_state, false};
}

void Store::CollectIfOwnersGoneLocked(const ResourceType& type, const std::string& key,
                                      const Json& created) {
  // Upstream's collector finds a dependent created after all its owners were deleted (a
  // controller acting on a stale cache) and deletes it in the background; here that happens at
  // once.
  const std::vector<kube::OwnerReference> owners = kube::OwnerReferences(created);
  if (owners.empty()) return;
  // A loop, not std::any_of: the thread-safety analysis cannot see that a lambda runs under mu_.
  for (const kube::OwnerReference& ref : owners) {
    if (uids_.count(ref.uid) > 0) return;
  }
  DeleteRequest background;
  background.propagation_policy = "Background";
  auto r = DeleteLocked(type, key, background);
  if (!r.ok() && !absl::IsNotFound(r.status())) {
    LOG(WARNING) << "devapiserver: gc " << key << ": " << r.status();
  } else {
    LOG(INFO) << "devapiserver: gc " << key << ": created with owners that are all gone";
  }
}

}  // namespace nereid::devapi
