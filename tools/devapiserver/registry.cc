#include "tools/devapiserver/registry.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/kube/errors.h"
#include "common/strings/absl_compat.h"

namespace nereid::devapi {
namespace {

ResourceType Builtin(const kube::Resource& r, std::string singular,
                     std::vector<std::string> short_names, bool has_status,
                     std::vector<std::string> categories = {}) {
  ResourceType t;
  t.resource = r;
  t.singular = std::move(singular);
  t.short_names = std::move(short_names);
  t.categories = std::move(categories);
  t.served_versions = {r.version};
  t.has_status = has_status;
  t.builtin = true;
  t.allow_unconditional_update = true;
  return t;
}

std::vector<std::string> StringList(const Json& json) {
  std::vector<std::string> out;
  if (!json.is_array()) return out;
  for (const Json& item : json) {
    if (item.is_string()) out.push_back(item.get<std::string>());
  }
  return out;
}

}  // namespace

kube::Resource ResourceType::AtVersion(std::string_view version) const {
  kube::Resource r = resource;
  if (!version.empty()) r.version = std::string(version);
  return r;
}

std::vector<ResourceType> BuiltinTypes() {
  namespace res = kube::resources;
  std::vector<ResourceType> types;
  types.push_back(Builtin(res::Namespaces(), "namespace", {"ns"}, true));
  types.push_back(Builtin(res::Pods(), "pod", {"po"}, true, {"all"}));
  types.push_back(Builtin(res::Services(), "service", {"svc"}, true, {"all"}));
  types.push_back(Builtin(res::Endpoints(), "endpoints", {"ep"}, false));
  types.push_back(Builtin(res::ConfigMaps(), "configmap", {"cm"}, false));
  types.push_back(Builtin(res::Secrets(), "secret", {}, false));
  types.push_back(Builtin(res::Events(), "event", {"ev"}, false));
  types.push_back(Builtin(res::Nodes(), "node", {"no"}, true));
  types.push_back(Builtin(res::ServiceAccounts(), "serviceaccount", {"sa"}, false));
  // Stored only (nothing provisions volumes), for manifests that claim storage.
  types.push_back(Builtin({"", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", true},
                          "persistentvolumeclaim", {"pvc"}, true));
  ResourceType leases = Builtin(res::Leases(), "lease", {}, false);
  leases.allow_unconditional_update = false;  // as upstream: leader election relies on it
  types.push_back(std::move(leases));
  ResourceType deployments = Builtin(res::Deployments(), "deployment", {"deploy"}, true, {"all"});
  deployments.scale = ScaleSpec{"spec.replicas", "status.replicas", ""};
  types.push_back(std::move(deployments));
  types.push_back(Builtin(res::HorizontalPodAutoscalers(), "horizontalpodautoscaler", {"hpa"},
                          true, {"all"}));
  // Stored and served only (nothing runs DaemonSets or enforces RBAC), so that
  // `kubectl apply -k deploy/` installs Nereid's manifests here as on a cluster.
  types.push_back(Builtin({"apps", "v1", "daemonsets", "DaemonSet", true}, "daemonset", {"ds"},
                          true, {"all"}));
  const std::string rbac = "rbac.authorization.k8s.io";
  types.push_back(Builtin({rbac, "v1", "clusterroles", "ClusterRole", false}, "clusterrole", {},
                          false));
  types.push_back(Builtin({rbac, "v1", "clusterrolebindings", "ClusterRoleBinding", false},
                          "clusterrolebinding", {}, false));
  types.push_back(Builtin({rbac, "v1", "roles", "Role", true}, "role", {}, false));
  types.push_back(Builtin({rbac, "v1", "rolebindings", "RoleBinding", true}, "rolebinding", {},
                          false));
  ResourceType crds = Builtin(res::CustomResourceDefinitions(), "customresourcedefinition",
                              {"crd", "crds"}, true);
  crds.allow_unconditional_update = false;
  types.push_back(std::move(crds));
  return types;
}

namespace {

absl::StatusOr<ResourceType> TypeFromCrdUnchecked(const Json& crd) {
  std::vector<kube::StatusCause> causes;
  auto require = [&](const Json* value, const std::string& field) {
    if (value == nullptr || !value->is_string() || value->get<std::string>().empty()) {
      causes.push_back({"FieldValueRequired", "Required value", field});
      return false;
    }
    return true;
  };
  const Json* group = kube::FindPath(crd, "spec.group");
  const Json* plural = kube::FindPath(crd, "spec.names.plural");
  const Json* kind = kube::FindPath(crd, "spec.names.kind");
  const Json* scope = kube::FindPath(crd, "spec.scope");
  require(group, "spec.group");
  require(plural, "spec.names.plural");
  require(kind, "spec.names.kind");
  if (require(scope, "spec.scope")) {
    std::string s = scope->get<std::string>();
    if (s != "Namespaced" && s != "Cluster") {
      causes.push_back({"FieldValueNotSupported",
                        absl::StrCat("Unsupported value: \"", s,
                                     "\": supported values: \"Cluster\", \"Namespaced\""),
                        "spec.scope"});
    }
  }
  const Json* versions = kube::FindPath(crd, "spec.versions");
  if (versions == nullptr || !versions->is_array() || versions->empty()) {
    causes.push_back({"FieldValueRequired", "Required value", "spec.versions"});
  }
  std::string name = kube::Name(crd);
  if (causes.empty()) {
    std::string expected = absl::StrCat(plural->get<std::string>(), ".", group->get<std::string>());
    if (name != expected) {
      causes.push_back({"FieldValueInvalid",
                        absl::StrCat("Invalid value: \"", name, "\": must be spec.names.plural+\".\"+spec.group"),
                        "metadata.name"});
    }
  }
  if (!causes.empty()) return kube::InvalidError("CustomResourceDefinition", name, causes);

  ResourceType t;
  t.builtin = false;
  t.allow_unconditional_update = false;
  t.resource.group = group->get<std::string>();
  t.resource.resource = plural->get<std::string>();
  t.resource.kind = kind->get<std::string>();
  t.resource.namespaced = scope->get<std::string>() == "Namespaced";
  t.singular = kube::StringAt(crd, "spec.names.singular");
  if (t.singular.empty()) {
    t.singular = t.resource.kind;
    std::transform(t.singular.begin(), t.singular.end(), t.singular.begin(), ::tolower);
  }
  if (const Json* s = kube::FindPath(crd, "spec.names.shortNames")) t.short_names = StringList(*s);
  if (const Json* c = kube::FindPath(crd, "spec.names.categories")) t.categories = StringList(*c);

  int storage_versions = 0;
  std::string first_served;
  for (size_t i = 0; i < versions->size(); ++i) {
    const Json& v = (*versions)[i];
    std::string vname = v.is_object() ? v.value("name", "") : "";
    if (vname.empty()) {
      causes.push_back({"FieldValueRequired", "Required value",
                        absl::StrCat("spec.versions[", i, "].name")});
      continue;
    }
    if (v.value("storage", false)) ++storage_versions;
    if (!v.value("served", false)) continue;
    t.served_versions.push_back(vname);
    if (first_served.empty()) first_served = vname;
    if (const Json* schema = kube::FindPath(v, "schema.openAPIV3Schema");
        schema != nullptr && schema->is_object()) {
      t.schemas[vname] = *schema;
    }
    // Subresources, columns: taken from the first served version (versions rarely differ).
    if (vname != first_served) continue;
    if (const Json* sub = kube::FindPath(v, "subresources.status"); sub != nullptr) {
      t.has_status = true;
    }
    if (const Json* scale = kube::FindPath(v, "subresources.scale");
        scale != nullptr && scale->is_object()) {
      ScaleSpec spec;
      auto strip = [](std::string p) { return !p.empty() && p[0] == '.' ? p.substr(1) : p; };
      spec.spec_replicas_path = strip(scale->value("specReplicasPath", ".spec.replicas"));
      spec.status_replicas_path = strip(scale->value("statusReplicasPath", ".status.replicas"));
      spec.label_selector_path = strip(scale->value("labelSelectorPath", ""));
      t.scale = spec;
    }
    if (const Json* cols = kube::FindPath(v, "additionalPrinterColumns");
        cols != nullptr && cols->is_array()) {
      for (const Json& c : *cols) {
        if (!c.is_object()) continue;
        PrinterColumn col;
        col.name = c.value("name", "");
        col.type = c.value("type", "string");
        col.format = c.value("format", "");
        col.description = c.value("description", "");
        col.json_path = c.value("jsonPath", "");
        col.priority = c.value("priority", 0);
        t.columns.push_back(std::move(col));
      }
    }
  }
  if (storage_versions != 1) {
    causes.push_back({"FieldValueInvalid", "must have exactly one version marked as storage version",
                      "spec.versions"});
  }
  if (!causes.empty()) return kube::InvalidError("CustomResourceDefinition", name, causes);
  t.resource.version = first_served.empty() ? (*versions)[0].value("name", "") : first_served;
  return t;
}

}  // namespace

absl::StatusOr<ResourceType> TypeFromCrd(const Json& crd) {
  // Mistyped fields (a string where a bool belongs, ...) make nlohmann throw; refuse the CRD.
  try {
    return TypeFromCrdUnchecked(crd);
  } catch (const Json::exception& e) {
    return kube::InvalidError("CustomResourceDefinition", kube::Name(crd),
                              {{"FieldValueInvalid", absl::StrCat("malformed field: ", e.what()), "spec"}});
  }
}

Registry::Registry() {
  for (ResourceType& t : BuiltinTypes()) Put(std::move(t));
}

ResourceTypePtr Registry::Find(std::string_view group, std::string_view version,
                               std::string_view resource) const {
  absl::MutexLock lock(&mu_);
  auto it = types_.find(absl::StrCat(ToAbsl(group), "/", ToAbsl(resource)));
  if (it == types_.end()) return nullptr;
  const auto& versions = it->second->served_versions;
  if (std::find(versions.begin(), versions.end(), version) == versions.end()) return nullptr;
  return it->second;
}

ResourceTypePtr Registry::FindByStorageKey(std::string_view storage_key) const {
  absl::MutexLock lock(&mu_);
  auto it = types_.find(std::string(storage_key));
  return it == types_.end() ? nullptr : it->second;
}

ResourceTypePtr Registry::FindByKind(std::string_view group, std::string_view kind) const {
  absl::MutexLock lock(&mu_);
  for (const auto& [key, type] : types_) {
    if (type->resource.group == group && type->resource.kind == kind) return type;
  }
  return nullptr;
}

std::vector<ResourceTypePtr> Registry::All() const {
  absl::MutexLock lock(&mu_);
  std::vector<ResourceTypePtr> out;
  for (const auto& [key, type] : types_) out.push_back(type);
  return out;
}

void Registry::Put(ResourceType type) {
  std::string key = type.StorageKey();
  auto ptr = std::make_shared<const ResourceType>(std::move(type));
  absl::MutexLock lock(&mu_);
  types_[key] = std::move(ptr);
}

void Registry::Remove(std::string_view storage_key) {
  absl::MutexLock lock(&mu_);
  types_.erase(std::string(storage_key));
}

}  // namespace nereid::devapi
