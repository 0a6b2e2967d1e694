#include "common/kube/object.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/strings/absl_compat.h"

namespace nereid::kube {
namespace {

const Json* Member(const Json& obj, std::string_view key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

std::string StringOr(const Json* value) {
  return value != nullptr && value->is_string() ? value->get<std::string>() : std::string();
}

const Json* Metadata(const Json& obj) { return Member(obj, "metadata"); }

std::string MetaString(const Json& obj, std::string_view field) {
  const Json* meta = Metadata(obj);
  return meta == nullptr ? std::string() : StringOr(Member(*meta, field));
}

std::map<std::string, std::string> StringMap(const Json* value) {
  std::map<std::string, std::string> out;
  if (value == nullptr || !value->is_object()) return out;
  for (const auto& [k, v] : value->items()) {
    if (v.is_string()) out.emplace(k, v.get<std::string>());
  }
  return out;
}

std::optional<std::string> MapEntry(const Json& obj, std::string_view map_field,
                                    std::string_view key) {
  const Json* meta = Metadata(obj);
  if (meta == nullptr) return std::nullopt;
  const Json* map = Member(*meta, map_field);
  if (map == nullptr) return std::nullopt;
  const Json* value = Member(*map, key);
  if (value == nullptr || !value->is_string()) return std::nullopt;
  return value->get<std::string>();
}

}  // namespace

Json OwnerReference::ToJson() const {
  Json json = {{"apiVersion", api_version}, {"kind", kind}, {"name", name}, {"uid", uid}};
  if (controller) json["controller"] = true;
  if (block_owner_deletion) json["blockOwnerDeletion"] = true;
  return json;
}

OwnerReference OwnerReference::FromJson(const Json& json) {
  OwnerReference ref;
  ref.api_version = StringOr(Member(json, "apiVersion"));
  ref.kind = StringOr(Member(json, "kind"));
  ref.name = StringOr(Member(json, "name"));
  ref.uid = StringOr(Member(json, "uid"));
  const Json* controller = Member(json, "controller");
  ref.controller = controller != nullptr && controller->is_boolean() && controller->get<bool>();
  const Json* block = Member(json, "blockOwnerDeletion");
  ref.block_owner_deletion = block != nullptr && block->is_boolean() && block->get<bool>();
  return ref;
}

std::string Name(const Json& obj) { return MetaString(obj, "name"); }
std::string Namespace(const Json& obj) { return MetaString(obj, "namespace"); }
std::string Uid(const Json& obj) { return MetaString(obj, "uid"); }
std::string ResourceVersion(const Json& obj) { return MetaString(obj, "resourceVersion"); }

int64_t Generation(const Json& obj) {
  const Json* meta = Metadata(obj);
  const Json* gen = meta == nullptr ? nullptr : Member(*meta, "generation");
  return gen != nullptr && gen->is_number_integer() ? gen->get<int64_t>() : 0;
}

std::map<std::string, std::string> Labels(const Json& obj) {
  const Json* meta = Metadata(obj);
  return StringMap(meta == nullptr ? nullptr : Member(*meta, "labels"));
}

std::map<std::string, std::string> Annotations(const Json& obj) {
  const Json* meta = Metadata(obj);
  return StringMap(meta == nullptr ? nullptr : Member(*meta, "annotations"));
}

std::optional<std::string> Label(const Json& obj, std::string_view key) {
  return MapEntry(obj, "labels", key);
}

std::optional<std::string> Annotation(const Json& obj, std::string_view key) {
  return MapEntry(obj, "annotations", key);
}

std::vector<OwnerReference> OwnerReferences(const Json& obj) {
  std::vector<OwnerReference> refs;
  const Json* meta = Metadata(obj);
  const Json* list = meta == nullptr ? nullptr : Member(*meta, "ownerReferences");
  if (list == nullptr || !list->is_array()) return refs;
  for (const Json& item : *list) {
    if (item.is_object()) refs.push_back(OwnerReference::FromJson(item));
  }
  return refs;
}

std::optional<OwnerReference> ControllerOf(const Json& obj) {
  for (OwnerReference& ref : OwnerReferences(obj)) {
    if (ref.controller) return std::move(ref);
  }
  return std::nullopt;
}

bool IsBeingDeleted(const Json& obj) { return !MetaString(obj, "deletionTimestamp").empty(); }

std::optional<absl::Time> CreationTimestamp(const Json& obj) {
  return ParseTimestamp(MetaString(obj, "creationTimestamp"));
}

std::string Key(const Json& obj) { return MakeKey(Namespace(obj), Name(obj)); }

std::string MakeKey(std::string_view ns, std::string_view name) {
  return ns.empty() ? std::string(name) : absl::StrCat(ToAbsl(ns), "/", ToAbsl(name));
}

void SplitKey(std::string_view key, std::string* ns, std::string* name) {
  size_t slash = key.find('/');
  if (slash == std::string_view::npos) {
    ns->clear();
    *name = std::string(key);
  } else {
    *ns = std::string(key.substr(0, slash));
    *name = std::string(key.substr(slash + 1));
  }
}

const Json* FindPath(const Json& obj, std::string_view dotted_path) {
  const Json* current = &obj;
  for (absl::string_view part : absl::StrSplit(ToAbsl(dotted_path), '.', absl::SkipEmpty())) {
    current = Member(*current, ToStd(part));
    if (current == nullptr) return nullptr;
  }
  return current;
}

std::string StringAt(const Json& obj, std::string_view dotted_path) {
  return StringOr(FindPath(obj, dotted_path));
}

std::string DumpCompact(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string FormatTimestamp(absl::Time time) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", time, absl::UTCTimeZone());
}

std::optional<absl::Time> ParseTimestamp(std::string_view text) {
  if (text.empty()) return std::nullopt;
  absl::Time time;
  std::string error;
  if (!absl::ParseTime(absl::RFC3339_full, std::string(text), &time, &error)) return std::nullopt;
  return time;
}

}  // namespace nereid::kube
