#include "common/api/json_fields.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/strings/absl_compat.h"

namespace nereid::api {

using kube::Json;

std::string JoinPath(std::string_view parent, std::string_view key) {
  if (parent.empty()) return std::string(key);
  return absl::StrCat(ToAbsl(parent), ".", ToAbsl(key));
}

std::string IndexPath(std::string_view parent, size_t index) {
  return absl::StrCat(ToAbsl(parent), "[", index, "]");
}

std::string_view JsonTypeName(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::object:
      return "object";
    case Json::value_t::array:
      return "array";
    case Json::value_t::string:
      return "string";
    case Json::value_t::boolean:
      return "boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "integer";
    case Json::value_t::number_float:
      return "number";
    default:
      return "unknown";
  }
}

const Json* FieldReader::Get(const Json& obj, std::string_view key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

void FieldReader::AddTypeError(std::string field, std::string_view expected, const Json& got) {
  std::string message =
      absl::StrCat("must be ", ToAbsl(expected), ", got ", ToAbsl(JsonTypeName(got)));
  if (got.is_string() || got.is_number() || got.is_boolean()) {
    std::string shown = got.dump();
    if (shown.size() > 64) shown = shown.substr(0, 61) + "...";
    absl::StrAppend(&message, " ", shown);
  }
  causes_.push_back({"FieldValueTypeInvalid", std::move(message), std::move(field)});
}

void FieldReader::AddCause(std::string field, std::string reason, std::string message) {
  causes_.push_back({std::move(reason), std::move(message), std::move(field)});
}

std::optional<std::string> FieldReader::String(const Json& obj, std::string_view key,
                                               std::string_view parent) {
  const Json* value = Get(obj, key);
  if (value == nullptr) return std::nullopt;
  if (!value->is_string()) {
    AddTypeError(JoinPath(parent, key), "a string", *value);
    return std::nullopt;
  }
  return value->get<std::string>();
}

std::optional<int64_t> FieldReader::Int(const Json& obj, std::string_view key,
                                        std::string_view parent, int64_t min, int64_t max) {
  const Json* value = Get(obj, key);
  if (value == nullptr) return std::nullopt;
  int64_t result = 0;
  if (value->is_number_integer() && !value->is_number_unsigned()) {
    result = value->get<int64_t>();
  } else if (value->is_number_unsigned()) {
    if (value->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      AddCause(
          JoinPath(parent, key), "FieldValueInvalid",
          absl::StrCat("must be between ", min, " and ", max, ", got ", value->get<uint64_t>()));
      return std::nullopt;
    }
    result = static_cast<int64_t>(value->get<uint64_t>());
  } else if (value->is_number_float() && std::isfinite(value->get<double>()) &&
             std::trunc(value->get<double>()) == value->get<double>() &&
             std::fabs(value->get<double>()) < 9.2e18) {
    result = static_cast<int64_t>(value->get<double>());
  } else {
    AddTypeError(JoinPath(parent, key), "an integer", *value);
    return std::nullopt;
  }
  if (result < min || result > max) {
    AddCause(JoinPath(parent, key), "FieldValueInvalid",
             absl::StrCat("must be between ", min, " and ", max, ", got ", result));
    return std::nullopt;
  }
  return result;
}

std::optional<double> FieldReader::Number(const Json& obj, std::string_view key,
                                          std::string_view parent) {
  const Json* value = Get(obj, key);
  if (value == nullptr) return std::nullopt;
  if (!value->is_number()) {
    AddTypeError(JoinPath(parent, key), "a number", *value);
    return std::nullopt;
  }
  return value->get<double>();
}

std::optional<bool> FieldReader::Bool(const Json& obj, std::string_view key,
                                      std::string_view parent) {
  const Json* value = Get(obj, key);
  if (value == nullptr) return std::nullopt;
  if (!value->is_boolean()) {
    AddTypeError(JoinPath(parent, key), "a boolean (true or false)", *value);
    return std::nullopt;
  }
  return value->get<bool>();
}

std::optional<absl::Time> FieldReader::Time(const Json& obj, std::string_view key,
                                            std::string_view parent) {
  std::optional<std::string> text = String(obj, key, parent);
  if (!text.has_value()) return std::nullopt;
  std::optional<absl::Time> time = kube::ParseTimestamp(*text);
  if (!time.has_value()) {
    AddCause(JoinPath(parent, key), "FieldValueInvalid",
             absl::StrCat("must be an RFC 3339 timestamp such as 2024-05-01T10:00:00Z, got \"",
                          *text, "\""));
  }
  return time;
}

const Json* FieldReader::Object(const Json& obj, std::string_view key, std::string_view parent) {
  const Json* value = Get(obj, key);
  if (value == nullptr) return nullptr;
  if (!value->is_object()) {
    AddTypeError(JoinPath(parent, key), "an object", *value);
    return nullptr;
  }
  return value;
}

const Json* FieldReader::Array(const Json& obj, std::string_view key, std::string_view parent) {
  const Json* value = Get(obj, key);
  if (value == nullptr) return nullptr;
  if (!value->is_array()) {
    AddTypeError(JoinPath(parent, key), "a list", *value);
    return nullptr;
  }
  return value;
}

std::vector<std::string> FieldReader::StringArray(const Json& obj, std::string_view key,
                                                  std::string_view parent) {
  std::vector<std::string> out;
  const Json* array = Array(obj, key, parent);
  if (array == nullptr) return out;
  std::string path = JoinPath(parent, key);
  for (size_t i = 0; i < array->size(); ++i) {
    const Json& item = (*array)[i];
    if (!item.is_string()) {
      AddTypeError(IndexPath(path, i), "a string", item);
      continue;
    }
    out.push_back(item.get<std::string>());
  }
  return out;
}

}  // namespace nereid::api
