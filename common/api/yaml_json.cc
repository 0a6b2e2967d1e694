#include "common/api/yaml_json.h"

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "yaml-cpp/eventhandler.h"
#include "yaml-cpp/exceptions.h"
#include "yaml-cpp/mark.h"
#include "yaml-cpp/parser.h"

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

// Alias expansion copies the anchored value; a stream of nested aliases ("billion laughs") could
// otherwise expand a few hundred bytes into gigabytes.
constexpr size_t kMaxNodesPerDocument = 1'000'000;

absl::Status MarkedError(const YAML::Mark& mark, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat("line ", mark.line + 1, ": ", message));
}

// Well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF).
bool IsUtf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char lead = byte(i);
    size_t length;
    unsigned char low = 0x80, high = 0xBF;  // Range of the second byte.
    if (lead < 0x80) {
      ++i;
      continue;
    } else if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3;
      if (lead == 0xE0) low = 0xA0;   // Overlong.
      if (lead == 0xED) high = 0x9F;  // Surrogates.
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4;
      if (lead == 0xF0) low = 0x90;   // Overlong.
      if (lead == 0xF4) high = 0x8F;  // Past U+10FFFF.
    } else {
      return false;
    }
    if (text.size() - i < length || byte(i + 1) < low || byte(i + 1) > high) return false;
    for (size_t k = 2; k < length; ++k) {
      if ((byte(i + k) & 0xC0) != 0x80) return false;
    }
    i += length;
  }
  return true;
}

absl::StatusOr<Json> ConvertScalar(const YAML::Mark& mark, const std::string& tag,
                                   const std::string& value) {
  // JSON text is UTF-8, and a string that is not cannot be serialized again (nlohmann throws).
  if (!IsUtf8(value)) return MarkedError(mark, "a scalar is not valid UTF-8");
  if (tag == "!") return Json(value);  // Quoted or block scalar: always a string.
  if (tag.rfind(kCoreTag, 0) != 0) return PlainScalar(value);
  const std::string_view type = std::string_view(tag).substr(kCoreTag.size());
  if (type == "str") return Json(value);
  Json typed = PlainScalar(value);
  const bool ok = (type == "int" && typed.is_number_integer()) ||
                  (type == "float" && typed.is_number()) ||
                  (type == "bool" && typed.is_boolean()) || (type == "null" && typed.is_null());
  if (!ok) {
    return MarkedError(mark, absl::StrCat("\"", value, "\" is not a valid !!", std::string(type)));
  }
  return typed;
}

// Builds one JSON value per document straight from the parser's events, with an explicit stack
// (no recursion on nesting depth). The first error sticks; later events are ignored.
class JsonBuilder final : public YAML::EventHandler {
 public:
  absl::Status status() const { return status_; }
  size_t documents_started() const { return documents_started_; }
  const YAML::Mark& last_document_mark() const { return document_mark_; }
  // The finished document; null for an empty one.
  Json TakeDocument() { return std::move(document_); }

  void OnDocumentStart(const YAML::Mark& mark) override {
    ++documents_started_;
    document_mark_ = mark;
    document_ = nullptr;
    anchors_.clear();
    nodes_ = 0;
  }
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    Add(mark, anchor, nullptr, 1);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    auto it = anchors_.find(anchor);
    if (it == anchors_.end()) {  // yaml-cpp refuses unknown aliases; this is an alias to itself
      Fail(MarkedError(mark, "an alias refers to the node that contains it"));
      return;
    }
    Add(mark, YAML::NullAnchor, it->second.value, it->second.nodes, it->second.raw_scalar);
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    if (!status_.ok()) return;
    absl::StatusOr<Json> scalar = ConvertScalar(mark, tag, value);
    if (!scalar.ok()) {
      Fail(scalar.status());
      return;
    }
    Add(mark, anchor, *std::move(scalar), 1, value);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    Open(mark, anchor, Json::array());
  }
  void OnSequenceEnd() override { Close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    Open(mark, anchor, Json::object());
  }
  void OnMapEnd() override { Close(); }

 private:
  struct Anchored {
    Json value;
    size_t nodes = 0;
    std::optional<std::string> raw_scalar;
  };
  struct Container {
    Json value;
    YAML::anchor_t anchor = YAML::NullAnchor;
    size_t nodes = 1;
    std::optional<std::string> pending_key;  // maps: the key waiting for its value
  };

  void Fail(absl::Status status) {
    if (status_.ok()) status_ = std::move(status);
  }

  void Open(const YAML::Mark& mark, YAML::anchor_t anchor, Json empty) {
    if (!status_.ok()) return;
    if (!stack_.empty() && stack_.back().value.is_object() && !stack_.back().pending_key) {
      Fail(MarkedError(mark, "mapping keys must be scalars"));
      return;
    }
    stack_.push_back(Container{std::move(empty), anchor, 1, std::nullopt});
  }

  void Close() {
    if (!status_.ok() || stack_.empty()) return;
    Container done = std::move(stack_.back());
    stack_.pop_back();
    Add(last_mark_, done.anchor, std::move(done.value), done.nodes);
  }

  // Places a finished value into its parent (or as the document), remembering anchored values.
  // `raw_scalar` is a scalar's text, the only thing that may be a mapping key.
  void Add(const YAML::Mark& mark, YAML::anchor_t anchor, Json value, size_t nodes,
           std::optional<std::string> raw_scalar = std::nullopt) {
    if (!status_.ok()) return;
    last_mark_ = mark;
    nodes_ += nodes;
    if (nodes_ > kMaxNodesPerDocument) {
      Fail(MarkedError(mark, absl::StrCat("the document expands to more than ",
                                          kMaxNodesPerDocument, " values (nested aliases?)")));
      return;
    }
    if (anchor != YAML::NullAnchor) anchors_[anchor] = Anchored{value, nodes, raw_scalar};
    if (stack_.empty()) {
      document_ = std::move(value);
      return;
    }
    Container& parent = stack_.back();
    parent.nodes += nodes;
    if (parent.value.is_array()) {
      parent.value.push_back(std::move(value));
      return;
    }
    if (!parent.pending_key) {  // this value is a key: its text as written ("0x1F" stays "0x1F")
      if (!raw_scalar) {
        Fail(MarkedError(mark, "mapping keys must be scalars"));
        return;
      }
      if (parent.value.contains(*raw_scalar)) {
        Fail(MarkedError(mark, absl::StrCat("duplicate key \"", *raw_scalar, "\"")));
        return;
      }
      parent.pending_key = *std::move(raw_scalar);
      return;
    }
    parent.value[*parent.pending_key] = std::move(value);
    parent.pending_key.reset();
  }

  absl::Status status_;
  size_t documents_started_ = 0;
  YAML::Mark document_mark_;
  YAML::Mark last_mark_;
  Json document_;
  std::vector<Container> stack_;
  std::map<YAML::anchor_t, Anchored> anchors_;
  size_t nodes_ = 0;
};

}  // namespace

absl::StatusOr<std::vector<Json>> YamlToJson(std::string_view yaml) {
  std::istringstream stream{std::string(yaml)};
  std::vector<Json> out;
  try {
    YAML::Parser parser(stream);
    std::optional<int> previous_document_pos;
    while (true) {
      JsonBuilder builder;
      if (!parser.HandleNextDocument(builder)) break;
      if (!builder.status().ok()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "invalid YAML (document ", out.size() + 1, "): ", builder.status().message()));
      }
      // yaml-cpp 0.7 can report the same empty document forever on some malformed streams
      // ("{},{}"): its LoadAll never returns there. A document that starts where the previous one
      // did means the parser made no progress.
      const YAML::Mark& mark = builder.last_document_mark();
      if (previous_document_pos == mark.pos) {
        return absl::InvalidArgumentError(
            absl::StrCat("invalid YAML: unexpected content at line ", mark.line + 1, ", column ",
                         mark.column + 1));
      }
      previous_document_pos = mark.pos;
      Json document = builder.TakeDocument();
      if (document.is_null()) continue;  // Empty document between "---" lines.
      out.push_back(std::move(document));
    }
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("invalid YAML: ", e.what()));
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
