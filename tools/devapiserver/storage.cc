#include "tools/devapiserver/storage.h"

#include <algorithm>
#include <regex>
#include <set>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/kube/errors.h"
#include "common/log/log.h"
#include "common/status/macros.h"
#include "common/strings/absl_compat.h"
#include "tools/devapiserver/schema.h"

namespace nereid::devapi {
namespace {

using Type = kube::WatchEvent::Type;

constexpr char kForegroundFinalizer[] = "foregroundDeletion";

absl::Status BadRequest(std::string_view message) { return kube::MakeError("BadRequest", message); }

std::string ObjectKey(const ResourceType& type, std::string_view ns, std::string_view name) {
  return type.resource.namespaced ? absl::StrCat(ToAbsl(ns), "/", ToAbsl(name)) : std::string(name);
}

// "Foo.example.com" as the API server names a kind in messages.
std::string QualifiedKind(const ResourceType& type) {
  return type.resource.group.empty() ? type.resource.kind
                                     : absl::StrCat(type.resource.kind, ".", type.resource.group);
}

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

// The parts of an object whose change bumps metadata.generation.
Json SpecPart(const ResourceType& type, const Json& obj) {
  Json copy = obj;
  copy.erase("metadata");
  if (type.has_status) copy.erase("status");
  copy.erase("apiVersion");
  copy.erase("kind");
  return copy;
}

absl::Status ValidateName(const ResourceType& type, const std::string& name) {
  static const std::regex kSubdomain("^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$");
  static const std::regex kLabel("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$");
  bool label_only = type.builtin && (type.resource.resource == "namespaces" ||
                                     type.resource.resource == "services");
  bool ok = name.size() <= (label_only ? 63u : 253u) &&
            std::regex_match(name, label_only ? kLabel : kSubdomain);
  if (ok) return absl::OkStatus();
  return kube::InvalidError(
      QualifiedKind(type), name,
      {{"FieldValueInvalid",
        absl::StrCat("Invalid value: \"", name, "\": a lowercase RFC 1123 ",
                     label_only ? "label" : "subdomain",
                     " must consist of lower case alphanumeric characters, '-'",
                     label_only ? "" : " or '.'",
                     ", and must start and end with an alphanumeric character"),
        "metadata.name"}});
}

absl::Status CheckKind(const ResourceType& type, const Json& object) {
  if (!object.is_object()) return BadRequest("the request body must be a JSON object");
  auto kind = object.find("kind");
  if (kind != object.end() && kind->is_string() && !kind->get<std::string>().empty() &&
      kind->get<std::string>() != type.resource.kind) {
    return BadRequest(absl::StrCat("the kind of the provided object (", kind->get<std::string>(),
                                   ") does not match the expected kind ", type.resource.kind));
  }
  auto meta = object.find("metadata");
  if (meta != object.end() && !meta->is_object()) return BadRequest("metadata must be an object");
  return absl::OkStatus();
}

// Field types of ObjectMeta that the rest of the server reads: a mistyped one is refused here
// (400, as upstream's decoder does) instead of surfacing later.
absl::Status CheckMetadataTypes(const Json& object) {
  auto wrong = [](std::string_view field, std::string_view want) {
    return BadRequest(absl::StrCat("json: cannot unmarshal into Go struct field ObjectMeta.metadata.",
                                   ToAbsl(field), " of type ", ToAbsl(want)));
  };
  if (auto v = object.find("apiVersion"); v != object.end() && !v->is_string()) {
    return BadRequest("apiVersion must be a string");
  }
  auto meta = object.find("metadata");
  if (meta == object.end()) return absl::OkStatus();
  for (const char* f : {"name", "generateName", "namespace", "uid", "resourceVersion",
                        "creationTimestamp", "deletionTimestamp"}) {
    if (auto v = meta->find(f); v != meta->end() && !v->is_string() && !v->is_null()) {
      return wrong(f, "string");
    }
  }
  for (const char* f : {"labels", "annotations"}) {
    auto v = meta->find(f);
    if (v == meta->end() || v->is_null()) continue;
    if (!v->is_object()) return wrong(f, "map[string]string");
    for (const auto& [k, val] : v->items()) {
      if (!val.is_string()) return wrong(f, "map[string]string");
    }
  }
  if (auto v = meta->find("finalizers"); v != meta->end() && !v->is_null()) {
    if (!v->is_array()) return wrong("finalizers", "[]string");
    for (const Json& x : *v) {
      if (!x.is_string()) return wrong("finalizers", "[]string");
    }
  }
  if (auto v = meta->find("ownerReferences"); v != meta->end() && !v->is_null()) {
    if (!v->is_array()) return wrong("ownerReferences", "[]OwnerReference");
    for (const Json& ref : *v) {
      if (!ref.is_object()) return wrong("ownerReferences", "[]OwnerReference");
      for (const char* f : {"apiVersion", "kind", "name", "uid"}) {
        if (auto x = ref.find(f); x == ref.end() || !x->is_string()) {
          return kube::InvalidError("", "", {{"FieldValueRequired", "Required value",
                                              absl::StrCat("metadata.ownerReferences.", f)}});
        }
      }
      for (const char* f : {"controller", "blockOwnerDeletion"}) {
        if (auto x = ref.find(f); x != ref.end() && !x->is_boolean() && !x->is_null()) {
          return wrong("ownerReferences", "[]OwnerReference");
        }
      }
    }
  }
  if (auto v = meta->find("generation"); v != meta->end() && !v->is_number_integer() && !v->is_null()) {
    return wrong("generation", "int64");
  }
  return absl::OkStatus();
}

// Kind, metadata types, and for built-in kinds object-valued spec/status (CRs have schemas).
absl::Status CheckShape(const ResourceType& type, const Json& object) {
  RETURN_IF_ERROR(CheckKind(type, object));
  RETURN_IF_ERROR(CheckMetadataTypes(object));
  if (type.builtin) {
    for (const char* part : {"spec", "status"}) {
      if (auto v = object.find(part); v != object.end() && !v->is_object() && !v->is_null()) {
        return BadRequest(absl::StrCat("json: cannot unmarshal ", v->type_name(), " into Go struct field ",
                                       type.resource.kind, ".", part));
      }
    }
  }
  return absl::OkStatus();
}

// Puts apiVersion/kind/metadata.namespace right; 400 when the body contradicts the URL.
absl::Status Normalize(const ResourceType& type, std::string_view ns, Json& object) {
  RETURN_IF_ERROR(CheckShape(type, object));
  object["kind"] = type.resource.kind;
  if (!object.contains("apiVersion") || !object["apiVersion"].is_string()) {
    object["apiVersion"] = type.resource.ApiVersion();
  }
  Json& meta = object["metadata"];
  if (!meta.is_object()) meta = Json::object();
  // null means absent (as Go's decoder reads it).
  for (auto it = meta.begin(); it != meta.end();) {
    it = it->is_null() ? meta.erase(it) : std::next(it);
  }
  if (type.builtin) {
    for (const char* part : {"spec", "status"}) {
      if (object.contains(part) && object[part].is_null()) object.erase(part);
    }
  }
  if (type.resource.namespaced) {
    std::string body_ns = meta.value("namespace", "");
    if (!body_ns.empty() && body_ns != ns) {
      return BadRequest("the namespace of the provided object does not match the namespace sent "
                        "on the request");
    }
    meta["namespace"] = std::string(ns);
  } else {
    meta.erase("namespace");
  }
  meta.erase("managedFields");
  return absl::OkStatus();
}

// Secrets: stringData is a write-only convenience merged into data (base64), as upstream.
void FoldStringData(const ResourceType& type, Json& object) {
  if (!(type.builtin && type.resource.group.empty() && type.resource.resource == "secrets")) return;
  auto sd = object.find("stringData");
  if (sd == object.end()) return;
  if (sd->is_object()) {
    for (const auto& [k, v] : sd->items()) {
      if (v.is_string()) object["data"][k] = absl::Base64Escape(v.get<std::string>());
    }
  }
  object.erase("stringData");
}

void SetDefault(Json& obj, const char* key, Json value) {
  if (!obj.contains(key) || obj[key].is_null()) obj[key] = std::move(value);
}

// The defaults the API server fills into a PodSpec that controllers most often compare against
// (k8s.io/kubernetes/pkg/apis/core/v1/defaults.go), so code that diffs desired and live pods
// meets them here as it would on a cluster.
void DefaultPodSpec(Json& spec) {
  if (!spec.is_object()) return;
  SetDefault(spec, "restartPolicy", "Always");
  SetDefault(spec, "terminationGracePeriodSeconds", 30);
  SetDefault(spec, "dnsPolicy", "ClusterFirst");
  SetDefault(spec, "schedulerName", "default-scheduler");
  SetDefault(spec, "securityContext", Json::object());
  for (const char* list : {"containers", "initContainers"}) {
    auto containers = spec.find(list);
    if (containers == spec.end() || !containers->is_array()) continue;
    for (Json& c : *containers) {
      if (!c.is_object()) continue;
      std::string image = c.value("image", "");
      bool latest = image.find(':') == std::string::npos || image.ends_with(":latest");
      SetDefault(c, "imagePullPolicy", latest ? "Always" : "IfNotPresent");
      SetDefault(c, "terminationMessagePath", "/dev/termination-log");
      SetDefault(c, "terminationMessagePolicy", "File");
      if (auto ports = c.find("ports"); ports != c.end() && ports->is_array()) {
        for (Json& port : *ports) {
          if (port.is_object()) SetDefault(port, "protocol", "TCP");
        }
      }
    }
  }
}

// Defaults applied on create and update of built-in kinds (a subset of upstream's).
void ApplyBuiltinDefaults(const ResourceType& type, Json& object) {
  if (!type.builtin) return;
  const std::string& r = type.resource.resource;
  if (r == "pods") {
    DefaultPodSpec(object["spec"]);
  } else if (r == "daemonsets") {
    Json& spec = object["spec"];
    SetDefault(spec, "revisionHistoryLimit", 10);
    if (kube::FindPath(object, "spec.template.spec") != nullptr) DefaultPodSpec(spec["template"]["spec"]);
  } else if (r == "deployments") {
    Json& spec = object["spec"];
    SetDefault(spec, "replicas", 1);
    SetDefault(spec, "revisionHistoryLimit", 10);
    SetDefault(spec, "progressDeadlineSeconds", 600);
    if (const Json* t = kube::FindPath(object, "spec.template.spec"); t != nullptr) {
      DefaultPodSpec(spec["template"]["spec"]);
    }
  } else if (r == "services") {
    Json& spec = object["spec"];
    SetDefault(spec, "type", "ClusterIP");
    SetDefault(spec, "sessionAffinity", "None");
    if (auto ports = spec.find("ports"); ports != spec.end() && ports->is_array()) {
      for (Json& port : *ports) {
        if (!port.is_object()) continue;
        SetDefault(port, "protocol", "TCP");
        if (port.contains("port")) SetDefault(port, "targetPort", port["port"]);
      }
    }
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

struct ContinueToken {
  int64_t version = 0;
  std::string start;  // last key returned
};

std::string EncodeContinue(const ContinueToken& token) {
  Json doc = {{"v", "nereid.devapi/1"}, {"rv", token.version}, {"start", token.start}};
  return absl::WebSafeBase64Escape(doc.dump());
}

absl::StatusOr<ContinueToken> DecodeContinue(std::string_view text) {
  std::string raw;
  if (!absl::WebSafeBase64Unescape(ToAbsl(text), &raw)) return BadRequest("invalid continue token");
  Json doc = Json::parse(raw, nullptr, false);
  if (!doc.is_object() || !doc.contains("rv") || !doc["rv"].is_number_integer() ||
      !doc.contains("start") || !doc["start"].is_string()) {
    return BadRequest("invalid continue token");
  }
  return ContinueToken{doc["rv"].get<int64_t>(), doc["start"].get<std::string>()};
}

absl::StatusOr<Selection> MakeSelection(const ResourceType& type, const ListRequest& request) {
  Selection sel;
  sel.storage_key = type.StorageKey();
  sel.ns = type.resource.namespaced ? request.ns : "";
  auto labels = kube::LabelSelector::Parse(request.label_selector);
  if (!labels.ok()) {
    return BadRequest(absl::StrCat("unable to parse requirement: ", labels.status().message()));
  }
  sel.labels = *labels;
  auto fields = kube::FieldSelector::Parse(request.field_selector);
  if (!fields.ok()) return BadRequest(absl::StrCat("invalid field selector: ", fields.status().message()));
  ResourceType copy = type;
  sel.getter = [copy](const Json& obj, std::string_view field) { return FieldValue(copy, obj, field); };
  for (const auto& req : fields->requirements()) {
    if (!FieldValue(type, Json::object(), req.field)) {
      return BadRequest(absl::StrCat("field label not supported: ", req.field));
    }
  }
  sel.fields = *fields;
  return sel;
}

}  // namespace

std::optional<std::string> FieldValue(const ResourceType& type, const Json& object,
                                      std::string_view field) {
  if (field == "metadata.name") return kube::Name(object);
  if (field == "metadata.namespace") return kube::Namespace(object);
  const std::string& g = type.resource.group;
  const std::string& r = type.resource.resource;
  static const std::set<std::string_view> kPod = {
      "spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
      "spec.hostNetwork", "status.phase", "status.podIP", "status.nominatedNodeName"};
  static const std::set<std::string_view> kEvent = {
      "involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
      "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
      "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type"};
  bool supported = (g.empty() && r == "pods" && kPod.count(field)) ||
                   (g.empty() && r == "events" && kEvent.count(field)) ||
                   (g.empty() && r == "namespaces" && field == "status.phase") ||
                   (g.empty() && r == "nodes" && field == "spec.unschedulable") ||
                   (g.empty() && r == "secrets" && field == "type");
  if (!supported) return std::nullopt;
  if (field == "source") return kube::StringAt(object, "source.component");
  const Json* v = kube::FindPath(object, field);
  if (v == nullptr) {
    if (field == "spec.hostNetwork" || field == "spec.unschedulable") return "false";
    return "";
  }
  if (v->is_string()) return v->get<std::string>();
  return v->dump();
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
  auto hex = [this](int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += "0123456789abcdef"[absl::Uniform(rng_, 0, 16)];
    return s;
  };
  return absl::StrCat(hex(8), "-", hex(4), "-4", hex(3), "-", std::string(1, "89ab"[absl::Uniform(rng_, 0, 4)]),
                      hex(3), "-", hex(12));
}

ObjectPtr Store::FindLocked(const std::string& storage_key, const std::string& key) const {
  auto c = collections_.find(storage_key);
  if (c == collections_.end()) return nullptr;
  auto it = c->second.find(key);
  return it == c->second.end() ? nullptr : it->second;
}

absl::Status Store::CheckNamespaceLocked(const ResourceType& type, std::string_view ns) const {
  if (!type.resource.namespaced) return absl::OkStatus();
  if (ns.empty()) return BadRequest("a namespace is required for namespaced resources");
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

absl::Status Store::ValidateLocked(const ResourceType& type, Json& object,
                                   const WriteOptions& options) {
  if (type.builtin && type.resource.resource == "customresourcedefinitions") {
    return TypeFromCrd(object).status();
  }
  if (type.builtin) return absl::OkStatus();
  std::string api_version = object.value("apiVersion", "");
  std::string version = api_version.substr(api_version.find('/') + 1);
  auto schema = type.schemas.find(version);
  if (schema == type.schemas.end()) return absl::OkStatus();
  SchemaOutcome outcome = ApplySchema(schema->second, &object);
  if (!outcome.unknown_fields.empty()) {
    if (options.field_validation == "Strict") {
      std::vector<std::string> quoted;
      for (const std::string& f : outcome.unknown_fields) quoted.push_back(absl::StrCat("unknown field \"", f, "\""));
      return BadRequest(absl::StrCat("strict decoding error: ", absl::StrJoin(quoted, ", ")));
    }
    if (options.field_validation == "Warn" && options.warnings != nullptr) {
      for (const std::string& f : outcome.unknown_fields) {
        options.warnings->push_back(absl::StrCat("unknown field \"", f, "\""));
      }
    }
  }
  if (!outcome.causes.empty()) {
    return kube::InvalidError(QualifiedKind(type), kube::Name(object), outcome.causes);
  }
  return absl::OkStatus();
}

absl::StatusOr<Json> Store::Get(const ResourceType& type, std::string_view ns,
                                std::string_view name) {
  absl::MutexLock lock(&mu_);
  ObjectPtr obj = FindLocked(type.StorageKey(), ObjectKey(type, ns, name));
  if (obj == nullptr) return kube::NotFoundError(type.resource.QualifiedName(), name);
  return *obj;
}

absl::StatusOr<ListResult> Store::List(const ResourceType& type, const ListRequest& request) {
  ASSIGN_OR_RETURN(Selection sel, MakeSelection(type, request));
  if (request.limit < 0) return BadRequest("limit must be non-negative");
  absl::MutexLock lock(&mu_);
  ContinueToken token{version_, ""};
  if (!request.continue_token.empty()) {
    ASSIGN_OR_RETURN(token, DecodeContinue(request.continue_token));
  } else if (request.resource_version_match == "Exact") {
    if (!absl::SimpleAtoi(ToAbsl(request.resource_version), &token.version)) {
      return BadRequest(absl::StrCat("invalid resource version: ", request.resource_version));
    }
  }
  if (token.version > version_) {
    return kube::MakeError("Timeout", absl::StrCat("Too large resource version: ", token.version,
                                                   ", current: ", version_));
  }
  if (token.version < version_ && token.version < hub_.floor()) {
    return kube::GoneError(
        "The provided continue parameter is too old to display a consistent list result. You can "
        "start a new list without the continue parameter, or use the continue token in this "
        "response to retrieve the remainder of the results. Continuing with the provided token "
        "results in an inconsistent list - objects that were created, modified, or deleted between "
        "the time the first chunk was returned and now may show up in the list.");
  }
  // The collection as of token.version: today's state with later events undone.
  Collection view;
  if (auto c = collections_.find(sel.storage_key); c != collections_.end()) view = c->second;
  if (token.version < version_) {
    std::vector<const Event*> later = hub_.EventsAfter(token.version, sel.storage_key);
    for (auto it = later.rbegin(); it != later.rend(); ++it) {
      const Event& e = **it;
      std::string key = ObjectKey(type, kube::Namespace(*e.object), kube::Name(*e.object));
      if (e.previous == nullptr) {
        view.erase(key);
      } else {
        view[key] = e.previous;
      }
    }
  }
  ListResult result;
  result.resource_version = token.version;
  auto it = token.start.empty() ? view.begin() : view.upper_bound(token.start);
  if (!sel.ns.empty()) {
    std::string prefix = sel.ns + "/";
    if (token.start.empty()) it = view.lower_bound(prefix);
  }
  int64_t remaining = 0;
  std::string last_key;
  for (; it != view.end(); ++it) {
    const Json& obj = *it->second;
    if (!sel.Matches(obj)) continue;
    if (request.limit > 0 && static_cast<int64_t>(result.items.size()) >= request.limit) {
      ++remaining;
      continue;
    }
    result.items.push_back(obj);
    last_key = it->first;
  }
  if (remaining > 0) {
    result.continue_token = EncodeContinue({token.version, last_key});
    if (sel.labels.empty() && sel.fields.empty()) result.remaining_item_count = remaining;
  }
  return result;
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
  // What each type's PrepareForCreate does upstream, for the fields clients look at.
  const std::string& r = type.resource.resource;
  // Nodes keep the status they are registered with (kubelets create them that way).
  if (type.has_status && !(type.builtin && r == "nodes")) object.erase("status");
  if (type.builtin && r == "pods") {
    object["status"] = {{"phase", "Pending"}, {"qosClass", "BestEffort"}};
  } else if (type.builtin && r == "namespaces") {
    object["status"] = {{"phase", "Active"}};
    object["spec"]["finalizers"] = Json::array({"kubernetes"});
  } else if (type.builtin && (r == "deployments" || r == "daemonsets")) {
    object["status"] = Json::object();
  }
  ApplyBuiltinDefaults(type, object);
  FoldStringData(type, object);
  RETURN_IF_ERROR(ValidateLocked(type, object, options));
  if (type.builtin && r == "customresourcedefinitions") {
    ASSIGN_OR_RETURN(ResourceType crd_type, TypeFromCrd(object));
    Json names = object["spec"]["names"];
    std::string storage;
    for (const Json& v : object["spec"]["versions"]) {
      if (v.value("storage", false)) storage = v.value("name", "");
    }
    std::string now = kube::FormatTimestamp(options_.clock->Now());
    object["status"] = {
        {"acceptedNames", names},
        {"storedVersions", Json::array({storage})},
        {"conditions",
         Json::array({{{"type", "NamesAccepted"}, {"status", "True"}, {"reason", "NoConflicts"},
                       {"message", "no conflicts found"}, {"lastTransitionTime", now}},
                      {{"type", "Established"}, {"status", "True"}, {"reason", "InitialNamesAccepted"},
                       {"message", "the initial names have been accepted"},
                       {"lastTransitionTime", now}}})}};
    if (!options.dry_run) {
      ASSIGN_OR_RETURN(ObjectPtr stored, CommitLocked(type, key, std::move(object)));
      registry_->Put(std::move(crd_type));
      return *stored;
    }
  }
  if (options.dry_run) return object;
  ASSIGN_OR_RETURN(ObjectPtr stored, CommitLocked(type, key, std::move(object)));
  Json created = *stored;
  // Garbage collection of a dependent created after all its owners were deleted (a controller
  // acting on a stale cache): upstream's collector finds the owners gone and deletes it in the
  // background; here that happens at once (the client still gets the created object).
  const std::vector<kube::OwnerReference> owners = kube::OwnerReferences(created);
  if (!owners.empty() && std::none_of(owners.begin(), owners.end(), [&](const auto& ref) {
        return uids_.count(ref.uid) > 0;
      })) {
    DeleteRequest background;
    background.propagation_policy = "Background";
    auto r = DeleteLocked(type, key, background);
    if (!r.ok() && !absl::IsNotFound(r.status())) {
      LOG(WARNING) << "devapiserver: gc " << key << ": " << r.status();
    } else {
      LOG(INFO) << "devapiserver: gc " << key << ": created with owners that are all gone";
    }
  }
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
  RETURN_IF_ERROR(ValidateLocked(type, next, options));
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
    return BadRequest(absl::StrCat("the name of the object (", body_name,
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

  if (policy == "Orphan") {
    for (const Location& loc : DependentsLocked(uid)) {
      ObjectPtr dep = FindLocked(loc.storage_key, loc.key);
      ResourceTypePtr dep_type = TypeOf(loc.storage_key);
      if (dep == nullptr || dep_type == nullptr) continue;
      Json orphaned = *dep;
      RemoveOwnerRef(orphaned, uid);
      RETURN_IF_ERROR(CommitLocked(*dep_type, loc.key, std::move(orphaned)).status());
    }
  }
  if (policy == "Foreground") {
    std::vector<Location> deps = DependentsLocked(uid);
    if (!deps.empty()) {
      std::vector<std::string> finalizers = Finalizers(marked);
      finalizers.push_back(kForegroundFinalizer);
      SetFinalizers(marked, finalizers);
      RETURN_IF_ERROR(CommitLocked(type, key, std::move(marked)).status());
      for (const Location& loc : deps) {
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
      return DeleteResult{obj, false};
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
      return BadRequest(absl::StrCat("invalid resource version: ", rv));
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

void Store::Shutdown() {
  absl::MutexLock lock(&mu_);
  shut_down_ = true;
  hub_.CloseAll();
}

}  // namespace nereid::devapi
