#include "common/api/yaml_json.h"

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "yaml-cpp/yaml.h"

namespace nereid::api {
namespace {

using kube::Json;

bool IsNullWord(const std::string& s) {
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

bool IsDigits(std::string_view s, int base) {
  if (s.empty()) return false;
  for (char c : s) {
    bool ok = base == 16  ? std::isxdigit(static_cast<unsigned char>(c)) != 0
              : base == 8 ? (c >= '0' && c <= '7')
                          : (c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

// YAML 1.2 core schema integer: [-+]?[0-9]+ | 0o[0-7]+ | 0x[0-9a-fA-F]+.
bool ParseInteger(const std::string& s, Json* out) {
  std::string_view body = s;
  int base = 10;
  bool negative = false;
  if (body.size() > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'o')) {
    base = body[1] == 'x' ? 16 : 8;
    body.remove_prefix(2);
  } else if (!body.empty() && (body[0] == '-' || body[0] == '+')) {
    negative = body[0] == '-';
    body.remove_prefix(1);
  }
  if (!IsDigits(body, base)) return false;
  std::string digits(body);
  errno = 0;
  char* end = nullptr;
  unsigned long long magnitude = std::strtoull(digits.c_str(), &end, base);
  if (errno == ERANGE) {
    *out = std::strtod(s.c_str(), nullptr);  // Too big for 64 bits: keep its value as a float.
    return true;
  }
  if (!negative) {
    if (magnitude <= static_cast<unsigned long long>(INT64_MAX)) {
      *out = static_cast<int64_t>(magnitude);
    } else {
      *out = static_cast<uint64_t>(magnitude);
    }
    return true;
  }
  if (magnitude <= static_cast<unsigned long long>(INT64_MAX)) {
    *out = -static_cast<int64_t>(magnitude);
  } else if (magnitude == static_cast<unsigned long long>(INT64_MAX) + 1) {
    *out = INT64_MIN;
  } else {
    *out = -static_cast<double>(magnitude);
  }
  return true;
}

// YAML 1.2 core schema float: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
// (.inf/.nan have no JSON form; they stay strings.)
bool ParseFloat(const std::string& s, Json* out) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  size_t int_digits = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++int_digits;
  size_t frac_digits = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++frac_digits;
  }
  if (int_digits == 0 && frac_digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    size_t exp_digits = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++exp_digits;
    if (exp_digits == 0) return false;
  }
  if (i != s.size()) return false;
  *out = std::strtod(s.c_str(), nullptr);
  return true;
}

Json PlainScalar(const std::string& s) {
  if (IsNullWord(s)) return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  Json number;
  if (ParseInteger(s, &number) || ParseFloat(s, &number)) return number;
  return s;
}

constexpr std::string_view kCoreTag = "tag:yaml.org,2002:";

absl::Status Convert(const YAML::Node& node, Json* out);

absl::Status ConvertScalar(const YAML::Node& node, Json* out) {
  const std::string& tag = node.Tag();
  const std::string& value = node.Scalar();
  if (tag == "!") {  // Quoted or block scalar: always a string.
    *out = value;
    return absl::OkStatus();
  }
  if (tag.rfind(kCoreTag, 0) == 0) {
    std::string_view type = std::string_view(tag).substr(kCoreTag.size());
    if (type == "str") {
      *out = value;
      return absl::OkStatus();
    }
    Json typed = PlainScalar(value);
    bool ok = (type == "int" && typed.is_number_integer()) ||
              (type == "float" && typed.is_number()) || (type == "bool" && typed.is_boolean()) ||
              (type == "null" && typed.is_null());
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat("line ", node.Mark().line + 1, ": \"", value,
                                                     "\" is not a valid !!", std::string(type)));
    }
    *out = std::move(typed);
    return absl::OkStatus();
  }
  *out = PlainScalar(value);
  return absl::OkStatus();
}

absl::Status Convert(const YAML::Node& node, Json* out) {
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      *out = nullptr;
      return absl::OkStatus();
    case YAML::NodeType::Scalar:
      return ConvertScalar(node, out);
    case YAML::NodeType::Sequence: {
      *out = Json::array();
      for (const YAML::Node& item : node) {
        Json converted;
        if (absl::Status s = Convert(item, &converted); !s.ok()) return s;
        out->push_back(std::move(converted));
      }
      return absl::OkStatus();
    }
    case YAML::NodeType::Map: {
      *out = Json::object();
      for (const auto& entry : node) {
        if (!entry.first.IsScalar()) {
          return absl::InvalidArgumentError(
              absl::StrCat("line ", entry.first.Mark().line + 1, ": mapping keys must be scalars"));
        }
        const std::string& key = entry.first.Scalar();
        if (out->contains(key)) {
          return absl::InvalidArgumentError(
              absl::StrCat("line ", entry.first.Mark().line + 1, ": duplicate key \"", key, "\""));
        }
        Json converted;
        if (absl::Status s = Convert(entry.second, &converted); !s.ok()) return s;
        (*out)[key] = std::move(converted);
      }
      return absl::OkStatus();
    }
  }
  return absl::InternalError("unknown YAML node type");
}

}  // namespace

absl::StatusOr<std::vector<Json>> YamlToJson(std::string_view yaml) {
  std::vector<YAML::Node> documents;
  try {
    documents = YAML::LoadAll(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("invalid YAML: ", e.what()));
  }
  std::vector<Json> out;
  for (const YAML::Node& doc : documents) {
    if (!doc.IsDefined() || doc.IsNull()) continue;  // Empty document between "---" lines.
    Json json;
    absl::Status status;
    try {
      status = Convert(doc, &json);
    } catch (const YAML::Exception& e) {  // yaml-cpp may still throw while iterating.
      status = absl::InvalidArgumentError(e.what());
    }
    if (!status.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid YAML (document ", out.size() + 1, "): ", status.message()));
    }
    out.push_back(std::move(json));
  }
  return out;
}

absl::StatusOr<std::vector<Json>> YamlFileToJson(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return absl::DataLossError(absl::StrCat("cannot read ", path));
  auto docs = YamlToJson(buffer.str());
  if (!docs.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", docs.status().message()));
  }
  return docs;
}

}  // namespace nereid::api
