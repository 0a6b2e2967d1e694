#include "tests/common/api/schema_check.h"

#include <cmath>
#include <regex>
#include <set>

#include "common/api/json_fields.h"

namespace nereid::api::testing {
namespace {

using kube::Json;

const std::set<std::string>& KnownKeywords() {
  static const std::set<std::string> keywords = {"description",
                                                 "type",
                                                 "properties",
                                                 "required",
                                                 "items",
                                                 "enum",
                                                 "minimum",
                                                 "maximum",
                                                 "minLength",
                                                 "maxLength",
                                                 "pattern",
                                                 "minItems",
                                                 "maxItems",
                                                 "format",
                                                 "default",
                                                 "nullable",
                                                 "x-kubernetes-preserve-unknown-fields",
                                                 "x-kubernetes-list-type",
                                                 "x-kubernetes-list-map-keys",
                                                 "x-kubernetes-validations",
                                                 "x-kubernetes-int-or-string",
                                                 "additionalProperties"};
  return keywords;
}

const std::set<std::string>& KnownTypes() {
  static const std::set<std::string> types = {"object",  "array",  "string",
                                              "integer", "number", "boolean"};
  return types;
}

bool TypeMatches(const std::string& type, const Json& value) {
  if (type == "object") return value.is_object();
  if (type == "array") return value.is_array();
  if (type == "string") return value.is_string();
  if (type == "boolean") return value.is_boolean();
  if (type == "number") return value.is_number();
  if (type == "integer") {
    if (value.is_number_integer()) return true;
    return value.is_number_float() && std::trunc(value.get<double>()) == value.get<double>();
  }
  return false;
}

void Lint(const Json& schema, const std::string& path, SchemaLint* out) {
  auto err = [&](const std::string& msg) { out->errors.push_back(path + ": " + msg); };
  if (!schema.is_object()) {
    err("schema must be an object");
    return;
  }
  for (const auto& [key, value] : schema.items()) {
    if (KnownKeywords().count(key) == 0) err("unknown keyword " + key);
  }
  std::string type = schema.value("type", "");
  const bool int_or_string = schema.value("x-kubernetes-int-or-string", false);
  if (type.empty() && !int_or_string) {
    err("missing type (structural schemas need a type at every level)");
  } else if (!type.empty() && KnownTypes().count(type) == 0) {
    err("unknown type " + type);
  }
  if (schema.contains("x-kubernetes-preserve-unknown-fields")) {
    if (schema["x-kubernetes-preserve-unknown-fields"] != true) {
      err("x-kubernetes-preserve-unknown-fields must be true when set");
    }
    if (type != "object") err("x-kubernetes-preserve-unknown-fields on a non-object");
    out->preserve_unknown_paths.push_back(path);
  }
  if (schema.contains("format")) {
    static const std::set<std::string> formats = {"date-time", "int32", "int64"};
    std::string format = schema["format"].get<std::string>();
    if (formats.count(format) == 0) err("unexpected format " + format);
    if (format == "date-time" && type != "string") err("date-time on a non-string");
    if ((format == "int32" || format == "int64") && type != "integer") err("int format on " + type);
  }
  if (schema.contains("properties")) {
    if (type != "object") err("properties on a non-object");
    if (schema.contains("additionalProperties"))
      err("properties together with additionalProperties");
    for (const auto& [name, sub] : schema["properties"].items()) {
      Lint(sub, path.empty() ? name : path + "." + name, out);
    }
  }
  if (schema.contains("required")) {
    for (const Json& name : schema["required"]) {
      if (!schema.contains("properties") ||
          !schema["properties"].contains(name.get<std::string>())) {
        err("required field " + name.get<std::string>() + " is not a declared property");
      }
    }
  }
  if (type == "array") {
    if (!schema.contains("items")) {
      err("array without items");
    } else {
      Lint(schema["items"], path + "[]", out);
    }
  } else if (schema.contains("items")) {
    err("items on a non-array");
  }
  if (schema.contains("enum")) {
    for (const Json& v : schema["enum"]) {
      if (!TypeMatches(type, v)) err("enum value " + v.dump() + " is not a " + type);
    }
  }
  if (schema.contains("default")) {
    for (const std::string& e : CheckAgainstSchema(schema, schema["default"])) {
      err("default does not validate: " + e);
    }
  }
  if (schema.contains("pattern")) {
    try {
      std::regex re(schema["pattern"].get<std::string>());
    } catch (const std::regex_error&) {
      err("pattern does not compile");
    }
  }
}

void Check(const Json& schema, const Json& value, const std::string& path, bool root,
           std::vector<std::string>* errors) {
  auto err = [&](const std::string& msg) {
    errors->push_back((path.empty() ? std::string("<root>") : path) + ": " + msg);
  };
  if (value.is_null()) {
    if (schema.value("nullable", false)) return;
    err("null is not allowed");
    return;
  }
  std::string type = schema.value("type", "");
  if (schema.value("x-kubernetes-int-or-string", false) && type.empty()) {
    if (!TypeMatches("integer", value) && !value.is_string()) {
      err("must be an integer or a string, got " + std::string(JsonTypeName(value)));
    }
    return;
  }
  if (!TypeMatches(type, value)) {
    err("must be " + type + ", got " + std::string(JsonTypeName(value)));
    return;
  }
  if (schema.contains("enum")) {
    bool found = false;
    for (const Json& v : schema["enum"]) found = found || v == value;
    if (!found) err("value " + value.dump() + " is not in enum " + schema["enum"].dump());
  }
  if (value.is_number()) {
    double v = value.get<double>();
    if (schema.contains("minimum") && v < schema["minimum"].get<double>()) {
      err("below minimum " + schema["minimum"].dump());
    }
    if (schema.contains("maximum") && v > schema["maximum"].get<double>()) {
      err("above maximum " + schema["maximum"].dump());
    }
  }
  if (value.is_string()) {
    const std::string s = value.get<std::string>();
    if (schema.contains("minLength") && s.size() < schema["minLength"].get<size_t>()) {
      err("shorter than minLength");
    }
    if (schema.contains("maxLength") && s.size() > schema["maxLength"].get<size_t>()) {
      err("longer than maxLength");
    }
    if (schema.contains("pattern") &&
        !std::regex_search(s, std::regex(schema["pattern"].get<std::string>()))) {
      err("\"" + s + "\" does not match pattern " + schema["pattern"].get<std::string>());
    }
    if (schema.value("format", "") == "date-time" && !kube::ParseTimestamp(s).has_value()) {
      err("not a date-time");
    }
  }
  if (value.is_array()) {
    if (schema.contains("minItems") && value.size() < schema["minItems"].get<size_t>()) {
      err("fewer than minItems");
    }
    if (schema.contains("maxItems") && value.size() > schema["maxItems"].get<size_t>()) {
      err("more than maxItems");
    }
    for (size_t i = 0; i < value.size(); ++i) {
      Check(schema["items"], value[i], path + "[" + std::to_string(i) + "]", false, errors);
    }
  }
  if (value.is_object()) {
    const Json empty = Json::object();
    const Json& props = schema.contains("properties") ? schema["properties"] : empty;
    bool preserve = schema.value("x-kubernetes-preserve-unknown-fields", false);
    if (schema.contains("required")) {
      for (const Json& name : schema["required"]) {
        auto it = value.find(name.get<std::string>());
        if (it == value.end() || it->is_null()) {
          err("missing required field " + name.get<std::string>());
        }
      }
    }
    for (const auto& [key, sub] : value.items()) {
      std::string sub_path = path.empty() ? key : path + "." + key;
      if (root && key == "metadata") continue;  // ObjectMeta is the API server's business.
      if (props.contains(key)) {
        Check(props[key], sub, sub_path, false, errors);
      } else if (schema.contains("additionalProperties") &&
                 schema["additionalProperties"].is_object()) {
        Check(schema["additionalProperties"], sub, sub_path, false, errors);  // A map.
      } else if (!preserve) {
        errors->push_back(sub_path + ": unknown field (the API server would prune it)");
      }
    }
  }
}

}  // namespace

SchemaLint LintStructural(const Json& schema) {
  SchemaLint out;
  Lint(schema, "", &out);
  return out;
}

std::vector<std::string> CheckAgainstSchema(const Json& schema, const Json& value) {
  std::vector<std::string> errors;
  Check(schema, value, "", true, &errors);
  return errors;
}

const Json* SchemaAt(const Json& schema, const std::string& json_path) {
  if (json_path.empty() || json_path[0] != '.') return nullptr;
  const Json* node = &schema;
  size_t pos = 1;
  while (pos <= json_path.size()) {
    size_t next = json_path.find('.', pos);
    std::string key =
        json_path.substr(pos, next == std::string::npos ? std::string::npos : next - pos);
    if (!node->contains("properties") || !(*node)["properties"].contains(key)) return nullptr;
    node = &(*node)["properties"][key];
    if (next == std::string::npos) break;
    pos = next + 1;
  }
  return node;
}

}  // namespace nereid::api::testing
