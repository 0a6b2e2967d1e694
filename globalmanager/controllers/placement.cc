#include "globalmanager/controllers/placement.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status/macros.h"
#include "common/strings/absl_compat.h"

namespace nereid::gm {
namespace {

using kube::Json;

// Taints the DaemonSet controller tolerates on every daemon pod (pkg/controller/daemon/util):
// a worker that belongs on every matching node stays there through node trouble.
constexpr std::array<std::string_view, 7> kImplicitlyToleratedTaints = {
    "node.kubernetes.io/not-ready",       "node.kubernetes.io/unreachable",
    "node.kubernetes.io/disk-pressure",   "node.kubernetes.io/memory-pressure",
    "node.kubernetes.io/pid-pressure",    "node.kubernetes.io/unschedulable",
    "node.kubernetes.io/network-unavailable",
};

const Json* Member(const Json& obj, std::string_view key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(std::string(key));
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

std::string StringMember(const Json& obj, std::string_view key) {
  const Json* value = Member(obj, key);
  return value != nullptr && value->is_string() ? value->get<std::string>() : std::string();
}

// spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution, or nullptr.
const Json* RequiredNodeAffinity(const Json& pod_spec) {
  const Json* affinity = Member(pod_spec, "affinity");
  if (affinity == nullptr) return nullptr;
  const Json* node_affinity = Member(*affinity, "nodeAffinity");
  if (node_affinity == nullptr) return nullptr;
  return Member(*node_affinity, "requiredDuringSchedulingIgnoredDuringExecution");
}

bool HasNodeSelector(const Json& pod_spec) {
  const Json* selector = Member(pod_spec, "nodeSelector");
  return selector != nullptr && selector->is_object() && !selector->empty();
}

std::optional<int64_t> ParseInt(std::string_view text) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty()) return std::nullopt;
  return value;
}

absl::Status Invalid(std::string_view path, std::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(ToAbsl(path), ": ", ToAbsl(message)));
}

// Validates one requirement list (matchExpressions or matchFields).
absl::Status ValidateRequirements(const Json& requirements, std::string_view path, bool fields) {
  if (!requirements.is_array()) return Invalid(path, "must be a list");
  for (size_t i = 0; i < requirements.size(); ++i) {
    const std::string item_path = absl::StrCat(ToAbsl(path), "[", i, "]");
    const Json& requirement = requirements[i];
    if (!requirement.is_object()) return Invalid(item_path, "must be an object");
    const Json* key = Member(requirement, "key");
    if (key == nullptr || !key->is_string() || key->get<std::string>().empty()) {
      return Invalid(item_path + ".key", "required");
    }
    const Json* op_json = Member(requirement, "operator");
    if (op_json == nullptr || !op_json->is_string()) {
      return Invalid(item_path + ".operator", "required");
    }
    const std::string op = op_json->get<std::string>();
    std::vector<std::string> values;
    if (const Json* list = Member(requirement, "values"); list != nullptr) {
      if (!list->is_array()) return Invalid(item_path + ".values", "must be a list of strings");
      for (const Json& value : *list) {
        if (!value.is_string()) return Invalid(item_path + ".values", "must be a list of strings");
        values.push_back(value.get<std::string>());
      }
    }
    if (fields) {
      if (key->get<std::string>() != "metadata.name") {
        return Invalid(item_path + ".key", "only metadata.name is supported in matchFields");
      }
      if (op != "In" && op != "NotIn") {
        return Invalid(item_path + ".operator",
                       absl::StrCat("\"", op, "\" is not supported in matchFields (In, NotIn)"));
      }
      if (values.size() != 1) {
        return Invalid(item_path + ".values", "must have one element for metadata.name");
      }
      continue;
    }
    if (op == "In" || op == "NotIn") {
      if (values.empty()) return Invalid(item_path + ".values", "must be non-empty for " + op);
    } else if (op == "Exists" || op == "DoesNotExist") {
      if (!values.empty()) return Invalid(item_path + ".values", "must be empty for " + op);
    } else if (op == "Gt" || op == "Lt") {
      if (values.size() != 1 || !ParseInt(values[0]).has_value()) {
        return Invalid(item_path + ".values", "must be one integer for " + op);
      }
    } else {
      return Invalid(item_path + ".operator",
                     absl::StrCat("unknown operator \"", op,
                                  "\" (In, NotIn, Exists, DoesNotExist, Gt, Lt)"));
    }
  }
  return absl::OkStatus();
}

// Requirements are validated before matching, so malformed entries never reach here.
bool LabelRequirementMatches(const Json& requirement,
                             const std::map<std::string, std::string>& labels) {
  const std::string key = StringMember(requirement, "key");
  const std::string op = StringMember(requirement, "operator");
  std::vector<std::string> values;
  if (const Json* list = Member(requirement, "values"); list != nullptr && list->is_array()) {
    for (const Json& value : *list) {
      if (value.is_string()) values.push_back(value.get<std::string>());
    }
  }
  auto it = labels.find(key);
  const bool has = it != labels.end();
  auto contains = [&](const std::string& v) {
    return std::find(values.begin(), values.end(), v) != values.end();
  };
  if (op == "In") return has && contains(it->second);
  if (op == "NotIn") return !has || !contains(it->second);
  if (op == "Exists") return has;
  if (op == "DoesNotExist") return !has;
  if (op == "Gt" || op == "Lt") {
    if (!has || values.size() != 1) return false;
    std::optional<int64_t> label_value = ParseInt(it->second);
    std::optional<int64_t> bound = ParseInt(values[0]);
    if (!label_value || !bound) return false;
    return op == "Gt" ? *label_value > *bound : *label_value < *bound;
  }
  return false;
}

bool FieldRequirementMatches(const Json& requirement, const std::string& node_name) {
  const std::string op = StringMember(requirement, "operator");
  const Json* values = Member(requirement, "values");
  bool in = false;
  if (values != nullptr && values->is_array()) {
    for (const Json& value : *values) {
      if (value.is_string() && value.get<std::string>() == node_name) in = true;
    }
  }
  return op == "In" ? in : !in;
}

bool TermMatches(const Json& term, const Json& node) {
  const Json* expressions = Member(term, "matchExpressions");
  const Json* fields = Member(term, "matchFields");
  const bool has_expressions = expressions != nullptr && !expressions->empty();
  const bool has_fields = fields != nullptr && !fields->empty();
  if (!has_expressions && !has_fields) return false;  // An empty term matches nothing.
  if (has_expressions) {
    const std::map<std::string, std::string> labels = kube::Labels(node);
    for (const Json& requirement : *expressions) {
      if (!LabelRequirementMatches(requirement, labels)) return false;
    }
  }
  if (has_fields) {
    const std::string name = kube::Name(node);
    for (const Json& requirement : *fields) {
      if (!FieldRequirementMatches(requirement, name)) return false;
    }
  }
  return true;
}

bool Tolerates(const Json& toleration, const Json& taint) {
  if (!toleration.is_object()) return false;
  const std::string effect = StringMember(toleration, "effect");
  if (!effect.empty() && effect != StringMember(taint, "effect")) return false;
  const std::string key = StringMember(toleration, "key");
  std::string op = StringMember(toleration, "operator");
  if (op.empty()) op = "Equal";
  if (op == "Exists") return key.empty() || key == StringMember(taint, "key");
  if (key.empty()) return false;  // An empty key is only valid with Exists.
  return op == "Equal" && key == StringMember(taint, "key") &&
         StringMember(toleration, "value") == StringMember(taint, "value");
}

bool TaintsAllow(const Json& pod_spec, const Json& node) {
  const Json* spec = Member(node, "spec");
  if (spec == nullptr) return true;
  const Json* taints = Member(*spec, "taints");
  if (taints == nullptr || !taints->is_array()) return true;
  const Json* tolerations = Member(pod_spec, "tolerations");
  for (const Json& taint : *taints) {
    if (!taint.is_object()) continue;
    const std::string effect = StringMember(taint, "effect");
    if (effect != "NoSchedule" && effect != "NoExecute") continue;  // PreferNoSchedule is soft.
    const std::string key = StringMember(taint, "key");
    if (std::find(kImplicitlyToleratedTaints.begin(), kImplicitlyToleratedTaints.end(), key) !=
        kImplicitlyToleratedTaints.end()) {
      continue;
    }
    bool tolerated = false;
    if (tolerations != nullptr && tolerations->is_array()) {
      for (const Json& toleration : *tolerations) {
        if (Tolerates(toleration, taint)) {
          tolerated = true;
          break;
        }
      }
    }
    if (!tolerated) return false;
  }
  return true;
}

}  // namespace

bool SelectsNodes(const kube::Json& pod_spec) {
  if (!StringMember(pod_spec, "nodeName").empty()) return false;
  return HasNodeSelector(pod_spec) || RequiredNodeAffinity(pod_spec) != nullptr;
}

absl::Status ValidateNodeSelection(const kube::Json& pod_spec, std::string_view field_path) {
  if (!pod_spec.is_object()) return Invalid(field_path, "must be an object");
  const std::string base(field_path);
  if (const Json* selector = Member(pod_spec, "nodeSelector"); selector != nullptr) {
    if (!selector->is_object()) return Invalid(base + ".nodeSelector", "must be a map of strings");
    for (const auto& [key, value] : selector->items()) {
      if (!value.is_string()) {
        return Invalid(absl::StrCat(base, ".nodeSelector.", key), "must be a string");
      }
    }
  }
  const Json* required = RequiredNodeAffinity(pod_spec);
  if (required == nullptr) return absl::OkStatus();
  const std::string required_path =
      base + ".affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution";
  if (!required->is_object()) return Invalid(required_path, "must be an object");
  const Json* terms = Member(*required, "nodeSelectorTerms");
  if (terms == nullptr || !terms->is_array() || terms->empty()) {
    return Invalid(required_path + ".nodeSelectorTerms", "must be a non-empty list");
  }
  for (size_t i = 0; i < terms->size(); ++i) {
    const std::string term_path = absl::StrCat(required_path, ".nodeSelectorTerms[", i, "]");
    const Json& term = (*terms)[i];
    if (!term.is_object()) return Invalid(term_path, "must be an object");
    if (const Json* expressions = Member(term, "matchExpressions"); expressions != nullptr) {
      RETURN_IF_ERROR(ValidateRequirements(*expressions, term_path + ".matchExpressions", false));
    }
    if (const Json* fields = Member(term, "matchFields"); fields != nullptr) {
      RETURN_IF_ERROR(ValidateRequirements(*fields, term_path + ".matchFields", true));
    }
  }
  return absl::OkStatus();
}

namespace {

// NodeMatches for a pod spec already validated.
bool MatchesValidated(const Json& pod_spec, const Json& node, const PlacementOptions& options) {
  if (!node.is_object() || kube::Name(node).empty()) return false;
  if (kube::IsBeingDeleted(node)) return false;
  const std::map<std::string, std::string> labels = kube::Labels(node);
  if (options.edge_only && labels.find(std::string(kEdgeNodeRoleLabel)) == labels.end()) {
    return false;
  }
  if (const Json* selector = Member(pod_spec, "nodeSelector"); selector != nullptr) {
    for (const auto& [key, value] : selector->items()) {
      auto it = labels.find(key);
      if (it == labels.end() || it->second != value.get<std::string>()) return false;
    }
  }
  if (const Json* required = RequiredNodeAffinity(pod_spec); required != nullptr) {
    bool any = false;
    const Json* terms = Member(*required, "nodeSelectorTerms");
    if (terms == nullptr || !terms->is_array()) return false;
    for (const Json& term : *terms) {
      if (TermMatches(term, node)) {
        any = true;
        break;
      }
    }
    if (!any) return false;
  }
  if (options.respect_taints && !TaintsAllow(pod_spec, node)) return false;
  return true;
}

}  // namespace

absl::StatusOr<bool> NodeMatches(const kube::Json& pod_spec, const kube::Json& node,
                                 const PlacementOptions& options) {
  RETURN_IF_ERROR(ValidateNodeSelection(pod_spec));
  return MatchesValidated(pod_spec, node, options);
}

absl::StatusOr<Placement> PlacePodSpec(const kube::Json& pod_spec,
                                       const std::vector<kube::ObjectPtr>& nodes,
                                       const PlacementOptions& options) {
  Placement placement;
  const std::string node_name = StringMember(pod_spec, "nodeName");
  if (!node_name.empty()) {
    placement.mode = Placement::Mode::kNodeName;
    placement.nodes.push_back(node_name);
    return placement;
  }
  if (!SelectsNodes(pod_spec)) return placement;  // kUnplaced.
  RETURN_IF_ERROR(ValidateNodeSelection(pod_spec));
  placement.mode = Placement::Mode::kSelector;
  std::set<std::string> selected;
  for (const kube::ObjectPtr& node : nodes) {
    if (node == nullptr) continue;
    if (MatchesValidated(pod_spec, *node, options)) selected.insert(kube::Name(*node));
  }
  placement.nodes.assign(selected.begin(), selected.end());
  return placement;
}

absl::StatusOr<Placement> PlacePodSpec(const kube::Json& pod_spec, const kube::Lister& nodes,
                                       const PlacementOptions& options) {
  return PlacePodSpec(pod_spec, nodes.List(), options);
}

}  // namespace nereid::gm
