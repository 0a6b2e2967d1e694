#pragma once

// What devapiserver serves: the built-in resource types and the ones CRDs add at run time.
// A ResourceType carries everything the other layers need to treat a collection as the real API
// server does: scope, subresources, names for discovery, printer columns and the CRD schema.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/kube/object.h"
#include "common/kube/resource.h"

namespace nereid::devapi {

using kube::Json;

// One additionalPrinterColumn (CRDs) or a built-in column.
struct PrinterColumn {
  std::string name;
  std::string type = "string";  // string | integer | number | boolean | date
  std::string format;           // e.g. "name"
  std::string description;
  std::string json_path;        // CRDs: ".spec.x"; built-ins: empty (computed).
  int priority = 0;             // >0: shown only with -o wide.
};

// Where a scale subresource reads and writes (dotted paths without the leading dot).
struct ScaleSpec {
  std::string spec_replicas_path = "spec.replicas";
  std::string status_replicas_path = "status.replicas";
  std::string label_selector_path;  // optional
};

struct ResourceType {
  kube::Resource resource;  // group/version/resource/kind/namespaced
  std::string singular;
  std::vector<std::string> short_names;
  std::vector<std::string> categories;
  std::vector<std::string> served_versions;  // CRDs may serve several; objects are shared.
  bool has_status = false;
  std::optional<ScaleSpec> scale;
  bool builtin = true;             // built-ins accept strategic merge patch.
  bool allow_unconditional_update = true;  // PUT without resourceVersion (not leases, CRs, CRDs).
  std::vector<PrinterColumn> columns;      // CRDs only; built-ins print in table.cc.
  std::map<std::string, Json> schemas;     // CRDs: version -> openAPIV3Schema.

  // Key of the collection independent of version: "group/resource".
  std::string StorageKey() const { return resource.group + "/" + resource.resource; }
  kube::Resource AtVersion(std::string_view version) const;
};

using ResourceTypePtr = std::shared_ptr<const ResourceType>;

// Builds the ResourceType a CustomResourceDefinition object describes, or an Invalid error
// naming the fields that are wrong.
absl::StatusOr<ResourceType> TypeFromCrd(const Json& crd);

// Thread-safe set of served types. Built-ins are present from construction.
class Registry {
 public:
  Registry();

  // Looks up group/version/resource as it appears in a URL. nullptr when not served.
  ResourceTypePtr Find(std::string_view group, std::string_view version,
                       std::string_view resource) const;
  // Looks up by group and plural resource (any version): the storage identity.
  ResourceTypePtr FindByStorageKey(std::string_view storage_key) const;
  ResourceTypePtr FindByKind(std::string_view group, std::string_view kind) const;
  std::vector<ResourceTypePtr> All() const;

  // Adds or replaces the type a CRD defines (keyed by group/resource).
  void Put(ResourceType type);
  void Remove(std::string_view storage_key);

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, ResourceTypePtr> types_ ABSL_GUARDED_BY(mu_);  // by StorageKey()
};

// The built-in types devapiserver serves.
std::vector<ResourceType> BuiltinTypes();

}  // namespace nereid::devapi
