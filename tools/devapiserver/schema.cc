#include "tools/devapiserver/schema.h"

#include <regex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/kube/object.h"

namespace nereid::devapi {
namespace {

std::string Child(const std::string& path, const std::string& key) {
  return path.empty() ? key : absl::StrCat(path, ".", key);
}

// How the API server quotes a value in "Invalid value: ..." messages.
std::string Show(const Json& value) {
  if (value.is_string()) return absl::StrCat("\"", value.get<std::string>(), "\"");
  return kube::DumpCompact(value);
}

std::string TypeName(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::object: return "object";
    case Json::value_t::array: return "array";
    case Json::value_t::string: return "string";
    case Json::value_t::boolean: return "boolean";
    case Json::value_t::number_float: return "number";
    default: return "integer";
  }
}

class Processor {
 public:
  explicit Processor(SchemaOutcome* out) : out_(out) {}

  // Returns false if the value must be removed from its parent (null pruned before defaulting).
  void Process(const Json& schema, Json& value, const std::string& path, bool root) {
    if (!schema.is_object()) return;
    if (value.is_null()) {
      if (schema.value("nullable", false)) return;
      Invalid(path, value, absl::StrCat("must be of type ", schema.value("type", "object")),
              "FieldValueTypeInvalid");
      return;
    }
    if (!CheckType(schema, value, path)) return;
    if (value.is_object()) ProcessObject(schema, value, path, root);
    if (value.is_array()) {
      auto items = schema.find("items");
      if (items != schema.end()) {
        for (size_t i = 0; i < value.size(); ++i) {
          Process(*items, value[i], absl::StrCat(path, "[", i, "]"), false);
        }
      }
      CheckArray(schema, value, path);
    }
    if (value.is_string()) CheckString(schema, value, path);
    if (value.is_number()) CheckNumber(schema, value, path);
    CheckEnum(schema, value, path);
  }

 private:
  bool CheckType(const Json& schema, const Json& value, const std::string& path) {
    if (schema.value("x-kubernetes-int-or-string", false)) {
      if (value.is_string() || value.is_number_integer()) return true;
      Invalid(path, value, "must be of type int-or-string", "FieldValueTypeInvalid");
      return false;
    }
    std::string type = schema.value("type", "");
    if (type.empty()) return true;
    bool ok = (type == "object" && value.is_object()) || (type == "array" && value.is_array()) ||
              (type == "string" && value.is_string()) ||
              (type == "integer" && value.is_number_integer()) ||
              (type == "number" && value.is_number()) || (type == "boolean" && value.is_boolean());
    if (!ok) {
      out_->causes.push_back({"FieldValueTypeInvalid",
                              absl::StrCat("Invalid value: \"", TypeName(value), "\": ", path,
                                           " in body must be of type ", type, ": \"",
                                           TypeName(value), "\""),
                              path});
    }
    return ok;
  }

  void ProcessObject(const Json& schema, Json& value, const std::string& path, bool root) {
    const Json* props = nullptr;
    if (auto p = schema.find("properties"); p != schema.end() && p->is_object()) props = &*p;
    bool preserve = schema.value("x-kubernetes-preserve-unknown-fields", false);
    bool embedded = schema.value("x-kubernetes-embedded-resource", false);
    const Json* additional = nullptr;
    bool additional_any = false;
    if (auto a = schema.find("additionalProperties"); a != schema.end()) {
      if (a->is_object()) additional = &*a;
      if (a->is_boolean()) additional_any = a->get<bool>();
    }
    // Prune unknown fields.
    std::vector<std::string> keys;
    for (const auto& [key, unused] : value.items()) keys.push_back(key);
    for (const std::string& key : keys) {
      bool meta = (root || embedded) && (key == "apiVersion" || key == "kind" || key == "metadata");
      if (meta) continue;
      if (props != nullptr && props->contains(key)) continue;
      if (additional != nullptr) {
        Process(*additional, value[key], Child(path, key), false);
        continue;
      }
      if (preserve || additional_any) continue;
      out_->unknown_fields.push_back(Child(path, key));
      value.erase(key);
    }
    if (props == nullptr) return;
    // Defaults for absent fields; null for non-nullable fields with a default is replaced too.
    for (const auto& [key, sub] : props->items()) {
      if (!sub.is_object() || !sub.contains("default")) continue;
      auto it = value.find(key);
      if (it == value.end() || (it->is_null() && !sub.value("nullable", false))) {
        value[key] = sub["default"];
      }
    }
    for (const auto& [key, sub] : props->items()) {
      auto it = value.find(key);
      if (it == value.end()) continue;
      if (root && key == "metadata") continue;
      Process(sub, *it, Child(path, key), false);
    }
    if (auto req = schema.find("required"); req != schema.end() && req->is_array()) {
      for (const Json& r : *req) {
        if (r.is_string() && !value.contains(r.get<std::string>())) {
          out_->causes.push_back({"FieldValueRequired", "Required value",
                                  Child(path, r.get<std::string>())});
        }
      }
    }
    if (auto max = schema.find("maxProperties"); max != schema.end() && max->is_number_integer() &&
                                                 value.size() > max->get<size_t>()) {
      out_->causes.push_back({"FieldValueTooMany",
                              absl::StrCat("Too many: ", value.size(), ": must have at most ",
                                           max->get<size_t>(), " items"),
                              path});
    }
  }

  void CheckArray(const Json& schema, const Json& value, const std::string& path) {
    if (auto max = schema.find("maxItems");
        max != schema.end() && max->is_number_integer() && value.size() > max->get<size_t>()) {
      out_->causes.push_back({"FieldValueTooMany",
                              absl::StrCat("Too many: ", value.size(), ": must have at most ",
                                           max->get<size_t>(), " items"),
                              path});
    }
    if (auto min = schema.find("minItems");
        min != schema.end() && min->is_number_integer() && value.size() < min->get<size_t>()) {
      Invalid(path, value, absl::StrCat("should have at least ", min->get<size_t>(), " items"));
    }
  }

  void CheckString(const Json& schema, const Json& value, const std::string& path) {
    const std::string& s = value.get_ref<const std::string&>();
    // Lengths count characters (code points), as Go's utf8.RuneCountInString.
    size_t runes = 0;
    for (unsigned char c : s) runes += (c & 0xC0) != 0x80;
    if (auto max = schema.find("maxLength");
        max != schema.end() && max->is_number_integer() && runes > max->get<size_t>()) {
      out_->causes.push_back({"FieldValueTooLong",
                              absl::StrCat("Too long: may not be longer than ", max->get<size_t>()),
                              path});
    }
    if (auto min = schema.find("minLength");
        min != schema.end() && min->is_number_integer() && runes < min->get<size_t>()) {
      Invalid(path, value, absl::StrCat("should be at least ", min->get<size_t>(), " chars long"));
    }
    if (auto pattern = schema.find("pattern"); pattern != schema.end() && pattern->is_string()) {
      try {
        std::regex re(pattern->get<std::string>(), std::regex::ECMAScript);
        if (!std::regex_search(s, re)) {
          Invalid(path, value, absl::StrCat("should match '", pattern->get<std::string>(), "'"));
        }
      } catch (const std::regex_error&) {
        // An unsupported pattern is not enforced rather than rejecting every object.
      }
    }
  }

  void CheckNumber(const Json& schema, const Json& value, const std::string& path) {
    double v = value.get<double>();
    if (auto min = schema.find("minimum"); min != schema.end() && min->is_number()) {
      bool exclusive = schema.value("exclusiveMinimum", false);
      double m = min->get<double>();
      if (exclusive ? v <= m : v < m) {
        Invalid(path, value, absl::StrCat("should be greater than ", exclusive ? "" : "or equal to ",
                                          min->dump()));
      }
    }
    if (auto max = schema.find("maximum"); max != schema.end() && max->is_number()) {
      bool exclusive = schema.value("exclusiveMaximum", false);
      double m = max->get<double>();
      if (exclusive ? v >= m : v > m) {
        Invalid(path, value, absl::StrCat("should be less than ", exclusive ? "" : "or equal to ",
                                          max->dump()));
      }
    }
  }

  void CheckEnum(const Json& schema, const Json& value, const std::string& path) {
    auto e = schema.find("enum");
    if (e == schema.end() || !e->is_array()) return;
    for (const Json& allowed : *e) {
      if (allowed == value) return;
    }
    std::vector<std::string> shown;
    for (const Json& allowed : *e) shown.push_back(Show(allowed));
    out_->causes.push_back({"FieldValueNotSupported",
                            absl::StrCat("Unsupported value: ", Show(value),
                                         ": supported values: ", absl::StrJoin(shown, ", ")),
                            path});
  }

  void Invalid(const std::string& path, const Json& value, const std::string& what,
               const char* reason = "FieldValueInvalid") {
    out_->causes.push_back({reason,
                            absl::StrCat("Invalid value: ", Show(value), ": ", path, " in body ", what),
                            path});
  }

  SchemaOutcome* out_;
};

}  // namespace

SchemaOutcome ApplySchema(const Json& schema, Json* object) {
  SchemaOutcome out;
  try {
    Processor(&out).Process(schema, *object, "", /*root=*/true);
  } catch (const Json::exception& e) {
    // A malformed schema (e.g. a non-string "type") must not take the request down with it.
    out.causes.push_back({"FieldValueInvalid", absl::StrCat("schema could not be applied: ", e.what()), ""});
  }
  return out;
}

}  // namespace nereid::devapi
