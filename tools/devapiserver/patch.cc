#include "tools/devapiserver/patch.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/kube/errors.h"
#include "common/kube/object.h"
#include "common/status/macros.h"
#include "common/strings/absl_compat.h"

namespace nereid::devapi {
namespace {

void MergeInto(Json& target, const Json& patch) {
  if (!patch.is_object()) {
    target = patch;
    return;
  }
  if (!target.is_object()) target = Json::object();
  for (const auto& [key, value] : patch.items()) {
    if (value.is_null()) {
      target.erase(key);
    } else {
      MergeInto(target[key], value);
    }
  }
}

// ---- strategic merge -------------------------------------------------------------------------

constexpr std::string_view kPatchDirective = "$patch";
constexpr std::string_view kRetainKeys = "$retainKeys";
constexpr std::string_view kSetElementOrder = "$setElementOrder/";
constexpr std::string_view kDeleteFromPrimitiveList = "$deleteFromPrimitiveList/";

// The patchMergeKey of a list field, or "" when the list is atomic (replaced whole). `parent_list`
// is the name of the list field the enclosing object sits in ("containers" for a container), so
// `ports` resolves to containerPort inside a container and to port inside a Service spec.
std::string MergeKeyFor(std::string_view field, std::string_view parent_list) {
  if (field == "containers" || field == "initContainers" || field == "ephemeralContainers" ||
      field == "volumes" || field == "env" || field == "imagePullSecrets" ||
      field == "resourceClaims" || field == "readinessGates" || field == "hostAliases") {
    return field == "hostAliases" ? "ip" : (field == "readinessGates" ? "conditionType" : "name");
  }
  if (field == "volumeMounts") return "mountPath";
  if (field == "volumeDevices") return "devicePath";
  if (field == "ports") {
    if (parent_list == "containers" || parent_list == "initContainers" ||
        parent_list == "ephemeralContainers") {
      return "containerPort";
    }
    return "port";
  }
  if (field == "conditions" || field == "addresses") return "type";
  if (field == "taints") return "key";
  if (field == "ownerReferences") return "uid";
  if (field == "topologySpreadConstraints") return "topologyKey";
  return "";
}

// Primitive lists with patchStrategy=merge: set union instead of replacement.
bool IsMergedPrimitiveList(std::string_view field) { return field == "finalizers"; }

bool SameKey(const Json& a, const Json& b, const std::string& key) {
  auto ia = a.find(key);
  auto ib = b.find(key);
  return ia != a.end() && ib != b.end() && *ia == *ib;
}

absl::Status MergeMap(Json& target, const Json& patch, std::string_view parent_list);

// The list without its {"$patch": ...} marker elements.
Json WithoutDirectiveElements(const Json& list) {
  Json out = Json::array();
  for (const Json& v : list) {
    if (!(v.is_object() && v.contains(kPatchDirective))) out.push_back(v);
  }
  return out;
}

absl::Status MergeList(Json& target, const Json& patch, std::string_view field,
                       std::string_view parent_list) {
  std::string key = MergeKeyFor(field, parent_list);
  if (!target.is_array()) target = Json::array();
  bool objects = !patch.empty() && patch[0].is_object();
  if (key.empty() || !objects) {
    if (!objects && IsMergedPrimitiveList(field)) {
      for (const Json& v : patch) {
        if (std::find(target.begin(), target.end(), v) == target.end()) target.push_back(v);
      }
      return absl::OkStatus();
    }
    // A "$patch: replace" marker inside an atomic list is just dropped.
    target = WithoutDirectiveElements(patch);
    return absl::OkStatus();
  }
  // A list element {"$patch": "replace"} means: the patch list replaces the target list.
  for (const Json& v : patch) {
    if (v.is_object() && v.value(std::string(kPatchDirective), "") == "replace") {
      target = WithoutDirectiveElements(patch);
      return absl::OkStatus();
    }
  }
  for (const Json& item : patch) {
    if (!item.is_object()) return kube::BadRequestError(absl::StrCat("list ", ToAbsl(field), " mixes kinds"));
    if (!item.contains(key)) {
      return kube::BadRequestError(absl::StrCat("map: ", kube::DumpCompact(item), " does not contain declared merge key: ",
                                     key));
    }
    auto existing = std::find_if(target.begin(), target.end(),
                                 [&](const Json& e) { return e.is_object() && SameKey(e, item, key); });
    std::string directive = item.value(std::string(kPatchDirective), "");
    if (directive == "delete") {
      if (existing != target.end()) target.erase(existing);
      continue;
    }
    if (existing == target.end()) {
      Json fresh = Json::object();
      RETURN_IF_ERROR(MergeMap(fresh, item, field));
      target.push_back(std::move(fresh));
    } else if (directive == "replace") {
      Json fresh = item;
      fresh.erase(std::string(kPatchDirective));
      *existing = std::move(fresh);
    } else {
      RETURN_IF_ERROR(MergeMap(*existing, item, field));
    }
  }
  return absl::OkStatus();
}

// Reorders `list` so that the elements named in `order` come first in that order (as upstream's
// $setElementOrder does for the elements the client knows); others keep their relative order.
void ApplyElementOrder(Json& list, const Json& order, const std::string& key) {
  if (!list.is_array() || !order.is_array()) return;
  Json ordered = Json::array();
  std::vector<bool> used(list.size(), false);
  for (const Json& want : order) {
    for (size_t i = 0; i < list.size(); ++i) {
      if (used[i]) continue;
      bool match = key.empty() ? list[i] == want
                               : (want.is_object() && list[i].is_object() && SameKey(list[i], want, key));
      if (match) {
        ordered.push_back(list[i]);
        used[i] = true;
        break;
      }
    }
  }
  for (size_t i = 0; i < list.size(); ++i) {
    if (!used[i]) ordered.push_back(list[i]);
  }
  list = std::move(ordered);
}

absl::Status MergeMap(Json& target, const Json& patch, std::string_view parent_list) {
  if (!patch.is_object()) return kube::BadRequestError("strategic merge patch must be a JSON object");
  if (!target.is_object()) target = Json::object();
  std::string directive = patch.value(std::string(kPatchDirective), "");
  if (directive == "replace") {
    Json replaced = patch;
    replaced.erase(std::string(kPatchDirective));
    target = std::move(replaced);
    return absl::OkStatus();
  }
  if (!directive.empty() && directive != "merge" && directive != "delete") {
    return kube::BadRequestError(absl::StrCat("unknown patch type: ", directive));
  }
  for (const auto& [key, value] : patch.items()) {
    if (key == kPatchDirective || key == kRetainKeys) continue;
    if (absl::StartsWith(key, ToAbsl(kSetElementOrder))) continue;  // applied after merging
    if (absl::StartsWith(key, ToAbsl(kDeleteFromPrimitiveList))) {
      std::string field = key.substr(kDeleteFromPrimitiveList.size());
      auto it = target.find(field);
      if (it != target.end() && it->is_array() && value.is_array()) {
        Json kept = Json::array();
        for (const Json& v : *it) {
          if (std::find(value.begin(), value.end(), v) == value.end()) kept.push_back(v);
        }
        *it = std::move(kept);
      }
      continue;
    }
    if (value.is_null()) {
      target.erase(key);
    } else if (value.is_object()) {
      std::string sub = value.value(std::string(kPatchDirective), "");
      if (sub == "delete") {
        target.erase(key);
        continue;
      }
      RETURN_IF_ERROR(MergeMap(target[key], value, parent_list));
    } else if (value.is_array()) {
      RETURN_IF_ERROR(MergeList(target[key], value, key, parent_list));
    } else {
      target[key] = value;
    }
  }
  for (const auto& [key, value] : patch.items()) {
    if (!absl::StartsWith(key, ToAbsl(kSetElementOrder))) continue;
    std::string field = key.substr(kSetElementOrder.size());
    auto it = target.find(field);
    if (it != target.end()) ApplyElementOrder(*it, value, MergeKeyFor(field, parent_list));
  }
  if (auto retain = patch.find(kRetainKeys); retain != patch.end() && retain->is_array()) {
    Json kept = Json::object();
    for (const Json& k : *retain) {
      if (!k.is_string()) continue;
      if (auto it = target.find(k.get<std::string>()); it != target.end()) kept[it.key()] = *it;
    }
    target = std::move(kept);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Json> ApplyMergePatch(const Json& target, const Json& patch) {
  if (!patch.is_object()) return kube::BadRequestError("merge patch must be a JSON object");
  Json result = target;
  MergeInto(result, patch);
  return result;
}

absl::StatusOr<Json> ApplyJsonPatch(const Json& target, const Json& patch) {
  if (!patch.is_array()) return kube::BadRequestError("json patch must be a JSON array of operations");
  for (const Json& op : patch) {
    if (!op.is_object() || !op.contains("op") || !op.contains("path")) {
      return kube::BadRequestError(absl::StrCat("invalid json patch operation: ", kube::DumpCompact(op)));
    }
  }
  try {
    return target.patch(patch);
  } catch (const Json::exception& e) {
    return kube::MakeError("Invalid", absl::StrCat("the server rejected our request due to an error "
                                                   "in our request: ", e.what()));
  }
}

absl::StatusOr<Json> ApplyStrategicMergePatch(const Json& target, const Json& patch) {
  Json result = target;
  try {
    RETURN_IF_ERROR(MergeMap(result, patch, ""));
  } catch (const Json::exception& e) {
    return kube::BadRequestError(absl::StrCat("malformed strategic merge patch: ", e.what()));
  }
  return result;
}

}  // namespace nereid::devapi
