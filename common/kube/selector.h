#pragma once

// Label and field selectors with the Kubernetes grammar and semantics
// (k8s.io/apimachinery/pkg/labels and pkg/fields):
//   labels: "a=b", "a==b", "a!=b", "a in (x,y)", "a notin (x,y)", "a", "!a", comma = AND.
//           "a!=b" and "notin" also match objects without the label, as upstream.
//   fields: "f=v", "f==v", "f!=v", comma = AND; field values come from a caller-supplied getter
//           because each resource supports its own set of fields.

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/kube/object.h"

namespace nereid::kube {

class LabelSelector {
 public:
  enum class Op { kEquals, kNotEquals, kIn, kNotIn, kExists, kDoesNotExist };
  struct Requirement {
    std::string key;
    Op op = Op::kExists;
    std::set<std::string> values;
  };

  // The empty selector matches everything.
  LabelSelector() = default;
  static absl::StatusOr<LabelSelector> Parse(std::string_view text);
  // A metav1.LabelSelector document: {"matchLabels": {...}, "matchExpressions": [...]}.
  static absl::StatusOr<LabelSelector> FromJson(const Json& selector);
  static LabelSelector FromMap(const std::map<std::string, std::string>& labels);

  bool Matches(const std::map<std::string, std::string>& labels) const;
  bool empty() const { return requirements_.empty(); }
  const std::vector<Requirement>& requirements() const { return requirements_; }
  // Canonical text form, parseable by Parse().
  std::string ToString() const;

 private:
  std::vector<Requirement> requirements_;
};

class FieldSelector {
 public:
  struct Requirement {
    std::string field;
    bool negate = false;
    std::string value;
  };
  // Returns the field's value for an object, or nullopt if the resource does not support it.
  using FieldGetter = std::function<std::optional<std::string>(const Json& object,
                                                               std::string_view field)>;

  FieldSelector() = default;
  static absl::StatusOr<FieldSelector> Parse(std::string_view text);

  // Fields the getter does not know make the selector fail validation, as the API server does.
  absl::Status Validate(const Json& sample, const FieldGetter& getter) const;
  bool Matches(const Json& object, const FieldGetter& getter) const;
  bool empty() const { return requirements_.empty(); }
  const std::vector<Requirement>& requirements() const { return requirements_; }

 private:
  std::vector<Requirement> requirements_;
};

// The fields every resource supports: metadata.name and metadata.namespace. Resources that support
// more (pods: spec.nodeName, status.phase) wrap this getter.
std::optional<std::string> DefaultFieldGetter(const Json& object, std::string_view field);

}  // namespace nereid::kube
