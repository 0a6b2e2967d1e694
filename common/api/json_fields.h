#pragma once

// Reading typed fields out of an unstructured object, collecting every type error with its field
// path instead of stopping at the first (the user sees all of them at once). A missing field or an
// explicit null reads as "absent"; whether it is required is the business of Validate(), not of
// parsing. Used by the kinds' FromJson(); never throws.

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "common/kube/errors.h"
#include "common/kube/object.h"

namespace nereid::api {

// "spec" + "url" -> "spec.url"; "" + "spec" -> "spec".
std::string JoinPath(std::string_view parent, std::string_view key);
// "spec.trainingWorkers" + 2 -> "spec.trainingWorkers[2]".
std::string IndexPath(std::string_view parent, size_t index);

class FieldReader {
 public:
  // The member `key` of `obj`, or nullptr when `obj` is not an object, the key is absent or null.
  static const kube::Json* Get(const kube::Json& obj, std::string_view key);

  // Each reader takes the containing object and the path of that object ("" for the root).
  std::optional<std::string> String(const kube::Json& obj, std::string_view key,
                                    std::string_view parent);
  // Accepts JSON integers and floats with an integral value; checks [min, max].
  std::optional<int64_t> Int(const kube::Json& obj, std::string_view key, std::string_view parent,
                             int64_t min = std::numeric_limits<int64_t>::min(),
                             int64_t max = std::numeric_limits<int64_t>::max());
  std::optional<double> Number(const kube::Json& obj, std::string_view key,
                               std::string_view parent);
  std::optional<bool> Bool(const kube::Json& obj, std::string_view key, std::string_view parent);
  // An RFC 3339 timestamp string.
  std::optional<absl::Time> Time(const kube::Json& obj, std::string_view key,
                                 std::string_view parent);
  // nullptr when absent; a type error (and nullptr) when present but not an object / array.
  const kube::Json* Object(const kube::Json& obj, std::string_view key, std::string_view parent);
  const kube::Json* Array(const kube::Json& obj, std::string_view key, std::string_view parent);
  std::vector<std::string> StringArray(const kube::Json& obj, std::string_view key,
                                       std::string_view parent);

  // Records a problem at `field`.
  void AddTypeError(std::string field, std::string_view expected, const kube::Json& got);
  void AddCause(std::string field, std::string reason, std::string message);

  bool ok() const { return causes_.empty(); }
  const std::vector<kube::StatusCause>& causes() const { return causes_; }
  std::vector<kube::StatusCause> TakeCauses() { return std::move(causes_); }

 private:
  std::vector<kube::StatusCause> causes_;
};

// The JSON type name used in messages: "string", "integer", "number", "boolean", "object", ...
std::string_view JsonTypeName(const kube::Json& value);

}  // namespace nereid::api
