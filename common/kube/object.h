#pragma once

// Kubernetes objects as JSON documents (client-go's "unstructured"), plus typed accessors for the
// metadata every controller reads. Typed kinds (common/api) are parsed from these at the boundary.
// Objects handed out by informer caches are ObjectPtr: shared and immutable, never modified in place.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "nlohmann/json.hpp"

namespace nereid::kube {

using Json = nlohmann::json;
using ObjectPtr = std::shared_ptr<const Json>;

struct OwnerReference {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string uid;
  bool controller = false;
  bool block_owner_deletion = false;

  Json ToJson() const;
  static OwnerReference FromJson(const Json& json);
};

// Metadata accessors. They never throw: a missing or mistyped field reads as empty/zero.
std::string Name(const Json& obj);
std::string Namespace(const Json& obj);
std::string Uid(const Json& obj);
std::string ResourceVersion(const Json& obj);
int64_t Generation(const Json& obj);
std::map<std::string, std::string> Labels(const Json& obj);
std::map<std::string, std::string> Annotations(const Json& obj);
std::optional<std::string> Label(const Json& obj, std::string_view key);
std::optional<std::string> Annotation(const Json& obj, std::string_view key);
std::vector<OwnerReference> OwnerReferences(const Json& obj);
// The owner reference with controller=true, if any.
std::optional<OwnerReference> ControllerOf(const Json& obj);
bool IsBeingDeleted(const Json& obj);  // metadata.deletionTimestamp is set.
std::optional<absl::Time> CreationTimestamp(const Json& obj);

// "namespace/name", or "name" for cluster-scoped objects: the workqueue and cache key.
std::string Key(const Json& obj);
std::string MakeKey(std::string_view ns, std::string_view name);
// Splits a key made by MakeKey.
void SplitKey(std::string_view key, std::string* ns, std::string* name);

// Follows a dotted path ("status.phase", "spec.template.spec.nodeName"); nullptr if absent.
const Json* FindPath(const Json& obj, std::string_view dotted_path);
std::string StringAt(const Json& obj, std::string_view dotted_path);

// Compact JSON text; invalid UTF-8 in a string is replaced (U+FFFD) instead of thrown.
std::string DumpCompact(const Json& value);

// RFC 3339 in UTC with second precision, as the API server writes metav1.Time.
std::string FormatTimestamp(absl::Time time);
std::optional<absl::Time> ParseTimestamp(std::string_view text);

}  // namespace nereid::kube
