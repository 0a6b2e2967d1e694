// The Store's CRUD and watch (the rest of it is in admission.cc, list_paging.cc and
// garbage_collection.cc).

#include "tools/devapiserver/storage.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/kube/errors.h"
#include "common/log/log.h"
#include "common/status/macros.h"
#include "common/strings/absl_compat.h"
#include "tools/devapiserver/admission.h"
#include "tools/devapiserver/garbage_collection.h"
#include "tools/devapiserver/list_paging.h"

namespace nereid::devapi {
namespace {

using Type = kube::WatchEvent::Type;

// The parts of an object whose change bumps metadata.generation.
Json SpecPart(const ResourceType& type, const Json& obj) {
  Json copy = obj;
  copy.erase("metadata");
  if (type.has_status) copy.erase("status");
  copy.erase("apiVersion");
  copy.erase("kind");
  return copy;
}

}  // namespace

std::string ObjectKey(const ResourceType& type, std::string_view ns, std::string_view name) {
  return type.resource.namespaced ? absl::StrCat(ToAbsl(ns), "/", ToAbsl(name)) : std::string(name);
}

Store::Store(Registry* registry, StoreOptions options)
    : registry_(registry), options_(options), hub_(options.history_size) {}

Store::~Store() { Shutdown(); }

ResourceTypePtr Store::TypeOf(const std::string& storage_key) const {
  return registry_->FindByStorageKey(storage_key);
}

absl::Status Store::Start() {
  {
    absl::MutexLock lock(&mu_);
    if (options_.persistence != nullptr) {
      ASSIGN_OR_RETURN(Persistence::Snapshot snapshot, options_.persistence->LoadAll());
      version_ = snapshot.resource_version;
      for (Persistence::Record& r : snapshot.records) {
        int64_t rv = 0;
        if (absl::SimpleAtoi(kube::ResourceVersion(r.object), &rv)) version_ = std::max(version_, rv);
        if (r.storage_key == "apiextensions.k8s.io/customresourcedefinitions") {
          auto type = TypeFromCrd(r.object);
          if (type.ok()) {
            registry_->Put(*std::move(type));
          } else {
            LOG(WARNING) << "devapiserver: stored CRD " << r.object_key
                         << " no longer valid: " << type.status();
          }
        }
        std::string uid = kube::Uid(r.object);
        if (!uid.empty()) uids_[uid] = {r.storage_key, r.object_key};
        collections_[r.storage_key][r.object_key] =
            std::make_shared<const Json>(std::move(r.object));
      }
      LOG(INFO) << "devapiserver: loaded " << snapshot.records.size()
                << " objects, resourceVersion " << version_;
    }
    // Nothing before this point can be replayed to a watcher.
    hub_.ResetFloor(version_);
  }
  const ResourceType& ns_type = *registry_->FindByStorageKey("/namespaces");
  for (const char* name : {"default", "kube-system", "kube-public", "kube-node-lease"}) {
    auto created = Create(ns_type, "", Json{{"metadata", {{"name", name}}}});
    if (!created.ok() && !absl::IsAlreadyExists(created.status())) return created.status();
  }
  return absl::OkStatus();
}

std::string Store::NewUid() {
  // The generator is a parameter, not a capture: the thread-safety analysis does not know that a
  // lambda runs while mu_ is held.
  auto hex = [](absl::BitGen& rng, int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += "0123456789abcdef"[absl::Uniform(rng, 0, 16)];
    return s;
  };
  const char variant = "89ab"[absl::Uniform(rng_, 0, 4)];
  return absl::StrCat(hex(rng_, 8), "-", hex(rng_, 4), "-4", hex(rng_, 3), "-",
                      std::string(1, variant), hex(rng_, 3), "-", hex(rng_, 12));
}

ObjectPtr Store::FindLocked(const std::string& storage_key, const std::string& key) const {
  auto c = collections_.find(storage_key);
  if (c == collections_.end()) return nullptr;
  auto it = c->second.find(key);
  return it == c->second.end() ? nullptr : it->second;
}

absl::Status Store::CheckNamespaceLocked(const ResourceType& type, std::string_view ns) const {
  if (!type.resource.namespaced) return absl::OkStatus();
  if (ns.empty()) return kube::BadRequestError("a namespace is required for namespaced resources");
  ObjectPtr namespace_object = FindLocked("/namespaces", std::string(ns));
  if (namespace_object == nullptr) return kube::NotFoundError("namespaces", ns);
  if (kube::IsBeingDeleted(*namespace_object)) {
    return kube::MakeError(
        "Forbidden", absl::StrCat(type.resource.resource, " is forbidden: unable to create new "
                                  "content in namespace ", ToAbsl(ns), " because it is being terminated"));
  }
  return absl::OkStatus();
}

absl::StatusOr<ObjectPtr> Store::CommitLocked(const ResourceType& type, const std::string& key,
                                              Json object) {
  const std::string storage_key = type.StorageKey();
  ObjectPtr previous = FindLocked(storage_key, key);
  int64_t version = version_ + 1;
  object["metadata"]["resourceVersion"] = std::to_string(version);
  if (options_.persistence != nullptr) {
    absl::Status persisted = options_.persistence->Put(storage_key, key, object, version);
    if (!persisted.ok()) {
      LOG(ERROR) << "devapiserver: persisting " << storage_key << " " << key << ": " << persisted;
      return kube::MakeError("InternalError", absl::StrCat("storage error: ", persisted.message()));
    }
  }
  version_ = version;
  auto stored = std::make_shared<const Json>(std::move(object));
  collections_[storage_key][key] = stored;
  uids_[kube::Uid(*stored)] = {storage_key, key};
  hub_.Publish({previous == nullptr ? Type::kAdded : Type::kModified, version, storage_key, stored,
                previous});
  return stored;
}

absl::StatusOr<Json> Store::RemoveLocked(const ResourceType& type, const std::string& key,
                                         Json last_state) {
  const std::string storage_key = type.StorageKey();
  ObjectPtr previous = FindLocked(storage_key, key);
  if (previous == nullptr) return kube::NotFoundError(type.resource.QualifiedName(), key);
  int64_t version = version_ + 1;
  last_state["metadata"]["resourceVersion"] = std::to_string(version);
  if (options_.persistence != nullptr) {
    absl::Status persisted = options_.persistence->Remove(storage_key, key, version);
    if (!persisted.ok()) {
      LOG(ERROR) << "devapiserver: persisting delete of " << storage_key << " " << key << ": "
                 << persisted;
      return kube::MakeError("InternalError", absl::StrCat("storage error: ", persisted.message()));
    }
  }
  version_ = version;
  collections_[storage_key].erase(key);
  uids_.erase(kube::Uid(*previous));
  auto stored = std::make_shared<const Json>(std::move(last_state));
  hub_.Publish({Type::kDeleted, version, storage_key, stored, previous});
  AfterRemovalLocked(type, *stored);
  return *stored;
}

absl::StatusOr<Json> Store::Get(const ResourceType& type, std::string_view ns,
                                std::string_view name) {
  absl::MutexLock lock(&mu_);
  ObjectPtr obj = FindLocked(type.StorageKey(), ObjectKey(type, ns, name));
  if (obj == nullptr) return kube::NotFoundError(type.resource.QualifiedName(), name);
  return *obj;
}

absl::StatusOr<Json> Store::Create(const ResourceType& type, std::string_view ns, Json object,
                                   const WriteOptions& options) {
  RETURN_IF_ERROR(Normalize(type, ns, object));
  Json& meta = object["metadata"];
  std::string name = meta.value("name", "");
  std::string generate = meta.value("generateName", "");
  if (name.empty() && generate.empty()) {
    return kube::InvalidError(QualifiedKind(type), "",
                              {{"FieldValueRequired", "Required value: name or generateName is required",
                                "metadata.name"}});
  }
  absl::MutexLock lock(&mu_);
  if (!(type.builtin && type.resource.resource == "namespaces")) {
    RETURN_IF_ERROR(CheckNamespaceLocked(type, ns));
  }
  if (name.empty()) {
    for (int attempt = 0; attempt < 8; ++attempt) {
      std::string candidate = generate;
      for (int i = 0; i < 5; ++i) {
        candidate += "bcdfghjklmnpqrstvwxz2456789"[absl::Uniform(rng_, 0, 27)];
      }
      if (FindLocked(type.StorageKey(), ObjectKey(type, ns, candidate)) == nullptr) {
        name = candidate;
        break;
      }
    }
    if (name.empty()) return kube::MakeError("ServerTimeout", "could not generate a unique name");
    meta["name"] = name;
  }
  RETURN_IF_ERROR(ValidateName(type, name));
  const std::string key = ObjectKey(type, ns, name);
  if (FindLocked(type.StorageKey(), key) != nullptr) {
    return kube::AlreadyExistsError(type.resource.QualifiedName(), name);
  }
  meta["uid"] = NewUid();
  meta["creationTimestamp"] = kube::FormatTimestamp(options_.clock->Now());
  meta["generation"] = 1;
  meta.erase("deletionTimestamp");
  meta.erase("deletionGracePeriodSeconds");
  meta.erase("resourceVersion");
  PrepareForCreate(type, object);
  ApplyBuiltinDefaults(type, object);
  FoldStringData(type, object);
  RETURN_IF_ERROR(ValidateObject(type, object, options));
  RETURN_IF_ERROR(ValidateWorkloadSelector(type, object, nullptr));
  if (type.builtin && type.resource.resource == "customresourcedefinitions") {
    ASSIGN_OR_RETURN(ResourceType crd_type, TypeFromCrd(object));
    object["status"] = InitialCrdStatus(object, kube::FormatTimestamp(options_.clock->Now()));
    if (!options.dry_run) {
      ASSIGN_OR_RETURN(ObjectPtr stored, CommitLocked(type, key, std::move(object)));
      registry_->Put(std::move(crd_type));
      return *stored;
    }
  }
  if (options.dry_run) return object;
  ASSIGN_OR_RETURN(ObjectPtr stored, CommitLocked(type, key, std::move(object)));
  Json created = *stored;
  CollectIfOwnersGoneLocked(type, key, created);
  return created;
}

absl::StatusOr<Json> Store::UpdateLocked(const ResourceType& type, const std::string& key,
                                         Json object, std::string_view subresource,
                                         bool unconditional, const WriteOptions& options) {
  ObjectPtr old_ptr = FindLocked(type.StorageKey(), key);
  if (old_ptr == nullptr) return kube::NotFoundError(type.resource.QualifiedName(), kube::Name(object));
  const Json& old = *old_ptr;
  std::string rv = kube::ResourceVersion(object);
  if (rv.empty() && !unconditional && !type.allow_unconditional_update) {
    return kube::InvalidError(QualifiedKind(type), kube::Name(object),
                              {{"FieldValueInvalid", "Invalid value: 0x0: must be specified for an update",
                                "metadata.resourceVersion"}});
  }
  if (!rv.empty() && rv != kube::ResourceVersion(old)) {
    return kube::ConflictError(type.resource.QualifiedName(), kube::Name(old),
                               "the object has been modified; please apply your changes to the "
                               "latest version and try again");
  }
  Json next;
  if (subresource == "status") {
    next = old;
    if (object.contains("status")) {
      next["status"] = object["status"];
    } else {
      next.erase("status");
    }
  } else {
    next = std::move(object);
    if (type.has_status) {
      if (old.contains("status")) {
        next["status"] = old["status"];
      } else {
        next.erase("status");
      }
    }
    Json& meta = next["metadata"];
    for (const char* field : {"uid", "creationTimestamp", "deletionTimestamp",
                              "deletionGracePeriodSeconds", "generation", "name", "namespace"}) {
      if (old["metadata"].contains(field)) {
        meta[field] = old["metadata"][field];
      } else {
        meta.erase(field);
      }
    }
    if (kube::IsBeingDeleted(old)) {
      std::vector<std::string> before = Finalizers(old);
      for (const std::string& f : Finalizers(next)) {
        if (std::find(before.begin(), before.end(), f) == before.end()) {
          return kube::InvalidError(
              QualifiedKind(type), kube::Name(old),
              {{"FieldValueForbidden",
                absl::StrCat("Forbidden: no new finalizers can be added if the object is being "
                             "deleted, found new finalizers []string{\"", f, "\"}"),
                "metadata.finalizers"}});
        }
      }
    }
  }
  next["metadata"]["resourceVersion"] = old["metadata"].value("resourceVersion", "");
  next["metadata"].erase("managedFields");
  next["kind"] = type.resource.kind;
  if (!next.contains("apiVersion")) next["apiVersion"] = old.value("apiVersion", type.resource.ApiVersion());
  if (subresource.empty()) ApplyBuiltinDefaults(type, next);
  FoldStringData(type, next);
  RETURN_IF_ERROR(ValidateObject(type, next, options));
  if (subresource.empty()) RETURN_IF_ERROR(ValidateWorkloadSelector(type, next, &old));
  if (SpecPart(type, next) != SpecPart(type, old)) {
    next["metadata"]["generation"] = kube::Generation(old) + 1;
  }
  // A write that changes nothing is not a write: no new resourceVersion, no event.
  if (next == old) return old;
  if (options.dry_run) return next;
  // A terminating namespace also waits for its spec.finalizers (its contents to go).
  bool namespace_held = type.builtin && type.resource.resource == "namespaces" &&
                        kube::FindPath(next, "spec.finalizers") != nullptr &&
                        !kube::FindPath(next, "spec.finalizers")->empty();
  if (kube::IsBeingDeleted(next) && Finalizers(next).empty() && !namespace_held) {
    return RemoveLocked(type, key, std::move(next));
  }
  std::optional<ResourceType> crd_type;
  if (type.builtin && type.resource.resource == "customresourcedefinitions") {
    ASSIGN_OR_RETURN(crd_type, TypeFromCrd(next));
  }
  ASSIGN_OR_RETURN(ObjectPtr stored, CommitLocked(type, key, std::move(next)));
  if (crd_type) registry_->Put(*std::move(crd_type));
  // A dependent that stopped blocking (ownerReferences edited) may release a foreground owner.
  for (const kube::OwnerReference& ref : kube::OwnerReferences(old)) TryFinishForegroundLocked(ref.uid);
  return *FindLocked(type.StorageKey(), key);
}

absl::StatusOr<Json> Store::Update(const ResourceType& type, std::string_view ns,
                                   std::string_view name, Json object,
                                   std::string_view subresource, const WriteOptions& options) {
  RETURN_IF_ERROR(Normalize(type, ns, object));
  std::string body_name = object["metadata"].value("name", "");
  if (!body_name.empty() && body_name != name) {
    return kube::BadRequestError(absl::StrCat("the name of the object (", body_name,
                                   ") does not match the name on the URL (", ToAbsl(name), ")"));
  }
  object["metadata"]["name"] = std::string(name);
  absl::MutexLock lock(&mu_);
  return UpdateLocked(type, ObjectKey(type, ns, name), std::move(object), subresource,
                      /*unconditional=*/false, options);
}

absl::StatusOr<Json> Store::Patch(const ResourceType& type, std::string_view ns,
                                  std::string_view name, const MutateFn& mutate,
                                  std::string_view subresource, const WriteOptions& options) {
  absl::MutexLock lock(&mu_);
  const std::string key = ObjectKey(type, ns, name);
  ObjectPtr current = FindLocked(type.StorageKey(), key);
  if (current == nullptr) return kube::NotFoundError(type.resource.QualifiedName(), name);
  ASSIGN_OR_RETURN(Json patched, mutate(*current));
  RETURN_IF_ERROR(CheckShape(type, patched));
  if (kube::Name(patched) != name) {
    return kube::InvalidError(QualifiedKind(type), name,
                              {{"FieldValueInvalid", "field is immutable", "metadata.name"}});
  }
  if (type.resource.namespaced && kube::Namespace(patched) != ns) {
    return kube::InvalidError(QualifiedKind(type), name,
                              {{"FieldValueInvalid", "field is immutable", "metadata.namespace"}});
  }
  // A patch without resourceVersion applies to whatever is current.
  std::string rv = kube::ResourceVersion(patched);
  bool unconditional = rv.empty() || rv == kube::ResourceVersion(*current);
  if (rv.empty()) patched["metadata"]["resourceVersion"] = kube::ResourceVersion(*current);
  return UpdateLocked(type, key, std::move(patched), subresource, unconditional, options);
}

absl::StatusOr<DeleteResult> Store::DeleteLocked(const ResourceType& type, const std::string& key,
                                                 const DeleteRequest& request) {
  ObjectPtr current = FindLocked(type.StorageKey(), key);
  if (current == nullptr) {
    std::string ns, name;
    kube::SplitKey(key, &ns, &name);
    return kube::NotFoundError(type.resource.QualifiedName(), name);
  }
  const Json& obj = *current;
  const std::string uid = kube::Uid(obj);
  if (request.precondition_uid && *request.precondition_uid != uid) {
    return kube::ConflictError(type.resource.QualifiedName(), kube::Name(obj),
                               absl::StrCat("Precondition failed: UID in precondition: ",
                                            *request.precondition_uid, ", UID in object meta: ", uid));
  }
  if (request.precondition_resource_version &&
      *request.precondition_resource_version != kube::ResourceVersion(obj)) {
    return kube::ConflictError(
        type.resource.QualifiedName(), kube::Name(obj),
        absl::StrCat("Precondition failed: ResourceVersion in precondition: ",
                     *request.precondition_resource_version,
                     ", ResourceVersion in object meta: ", kube::ResourceVersion(obj)));
  }
  std::string policy = request.propagation_policy.value_or("Background");
  if (policy != "Background" && policy != "Foreground" && policy != "Orphan") {
    return kube::InvalidError("DeleteOptions", "",
                              {{"FieldValueNotSupported",
                                absl::StrCat("Unsupported value: \"", policy,
                                             "\": supported values: \"Foreground\", \"Background\", \"Orphan\""),
                                "propagationPolicy"}});
  }
  if (request.dry_run) return DeleteResult{obj, true};
  if (kube::IsBeingDeleted(obj)) return DeleteResult{obj, true};

  Json marked = obj;
  marked["metadata"]["deletionTimestamp"] = kube::FormatTimestamp(options_.clock->Now());
  marked["metadata"]["deletionGracePeriodSeconds"] = 0;
  marked["metadata"]["generation"] = kube::Generation(obj) + 1;

  if (type.builtin && type.resource.resource == "namespaces") {
    return DeleteNamespaceLocked(type, key, std::move(marked));
  }
  if (policy == "Orphan") RETURN_IF_ERROR(OrphanDependentsLocked(uid));
  if (policy == "Foreground") {
    std::vector<Location> dependents = DependentsLocked(uid);
    if (!dependents.empty()) {
      return DeleteForegroundLocked(type, key, std::move(marked), obj, dependents);
    }
  }
  if (!Finalizers(obj).empty()) {
    ASSIGN_OR_RETURN(ObjectPtr stored, CommitLocked(type, key, std::move(marked)));
    return DeleteResult{*stored, true};
  }
  ASSIGN_OR_RETURN(Json last, RemoveLocked(type, key, obj));
  return DeleteResult{std::move(last), false};
}

absl::StatusOr<DeleteResult> Store::Delete(const ResourceType& type, std::string_view ns,
                                           std::string_view name, const DeleteRequest& request) {
  absl::MutexLock lock(&mu_);
  return DeleteLocked(type, ObjectKey(type, ns, name), request);
}

absl::StatusOr<std::shared_ptr<Watcher>> Store::Watch(const ResourceType& type,
                                                      const ListRequest& request,
                                                      std::string api_version) {
  ASSIGN_OR_RETURN(Selection sel, MakeSelection(type, request));
  absl::MutexLock lock(&mu_);
  if (shut_down_) return kube::MakeError("ServiceUnavailable", "the server is shutting down");
  const std::string& rv = request.resource_version;
  std::shared_ptr<Watcher> watcher;
  if (rv.empty() || rv == "0") {
    watcher = std::make_shared<Watcher>(sel, std::move(api_version), options_.max_watch_queue, version_);
    if (auto c = collections_.find(sel.storage_key); c != collections_.end()) {
      for (const auto& [key, obj] : c->second) {
        int64_t obj_rv = 0;
        (void)absl::SimpleAtoi(kube::ResourceVersion(*obj), &obj_rv);
        watcher->OfferInitial(obj, obj_rv);
      }
    }
  } else {
    int64_t from = 0;
    if (!absl::SimpleAtoi(ToAbsl(rv), &from) || from < 0) {
      return kube::BadRequestError(absl::StrCat("invalid resource version: ", rv));
    }
    if (from < hub_.floor()) {
      return kube::GoneError(absl::StrCat("too old resource version: ", from, " (", hub_.floor(), ")"));
    }
    if (from > version_) {
      // A version this server never issued: it restarted without --data. Clients must relist.
      return kube::GoneError(absl::StrCat("too large resource version: ", from, " (current ", version_,
                                          "); the server may have restarted without --data"));
    }
    watcher = std::make_shared<Watcher>(sel, std::move(api_version), options_.max_watch_queue,
                                        std::max(from, hub_.floor()));
    hub_.Replay(from, *watcher);
  }
  hub_.Register(watcher);
  return watcher;
}

int64_t Store::CurrentVersion() const {
  absl::MutexLock lock(&mu_);
  return version_;
}

size_t Store::WatcherCount() const {
  absl::MutexLock lock(&mu_);
  return hub_.watcher_count();
}

void Store::ExpireWatches() {
  absl::MutexLock lock(&mu_);
  hub_.ExpireAll(version_);
}

void Store::Shutdown() {
  absl::MutexLock lock(&mu_);
  shut_down_ = true;
  hub_.CloseAll();
}

}  // namespace nereid::devapi
