#include "common/kube/selector.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/strings/absl_compat.h"

namespace nereid::kube {
namespace {

// A small hand-written scanner: selector text is short and the grammar is LL(1).
class Scanner {
 public:
  explicit Scanner(std::string_view text) : text_(text) {}

  void SkipSpace() {
    while (pos_ < text_.size() && absl::ascii_isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool AtEnd() {
    SkipSpace();
    return pos_ >= text_.size();
  }
  bool Consume(std::string_view token) {
    SkipSpace();
    if (text_.substr(pos_, token.size()) != token) return false;
    pos_ += token.size();
    return true;
  }
  // Reads a key or value: everything up to whitespace or an operator character.
  std::string Word() {
    SkipSpace();
    size_t start = pos_;
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (absl::ascii_isspace(static_cast<unsigned char>(c)) || c == ',' || c == '=' ||
          c == '!' || c == '(' || c == ')') {
        break;
      }
      ++pos_;
    }
    return std::string(text_.substr(start, pos_ - start));
  }
  // Reads "in" / "notin" as a keyword only when followed by whitespace or '('.
  bool Keyword(std::string_view word) {
    SkipSpace();
    if (text_.substr(pos_, word.size()) != word) return false;
    size_t after = pos_ + word.size();
    if (after < text_.size() && !absl::ascii_isspace(static_cast<unsigned char>(text_[after])) &&
        text_[after] != '(') {
      return false;
    }
    pos_ = after;
    return true;
  }
  size_t pos() const { return pos_; }

 private:
  std::string_view text_;
  size_t pos_ = 0;
};

absl::Status SyntaxError(std::string_view what, std::string_view text, size_t pos) {
  return absl::InvalidArgumentError(absl::StrCat("invalid ", ToAbsl(what), " selector \"",
                                                 ToAbsl(text), "\" at position ", pos));
}

bool ValidLabelKey(const std::string& key) {
  if (key.empty() || key.size() > 317) return false;
  for (char c : key) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.' &&
        c != '/') {
      return false;
    }
  }
  return true;
}

bool ValidLabelValue(const std::string& value) {
  if (value.size() > 63) return false;
  for (char c : value) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') {
      return false;
    }
  }
  return true;
}

}  // namespace

absl::StatusOr<LabelSelector> LabelSelector::Parse(std::string_view text) {
  LabelSelector selector;
  Scanner scan(text);
  if (scan.AtEnd()) return selector;
  while (true) {
    Requirement req;
    if (scan.Consume("!")) {
      req.key = scan.Word();
      req.op = Op::kDoesNotExist;
    } else {
      req.key = scan.Word();
      if (scan.Consume("==") || scan.Consume("=")) {
        req.op = Op::kEquals;
        req.values.insert(scan.Word());
      } else if (scan.Consume("!=")) {
        req.op = Op::kNotEquals;
        req.values.insert(scan.Word());
      } else if (scan.Keyword("notin") || scan.Keyword("in")) {
        // Which keyword matched: look back at the text just consumed.
        req.op = text.substr(0, scan.pos()).ends_with("notin") ? Op::kNotIn : Op::kIn;
        if (!scan.Consume("(")) return SyntaxError("label", text, scan.pos());
        while (true) {
          std::string value = scan.Word();
          if (!ValidLabelValue(value)) return SyntaxError("label", text, scan.pos());
          // An empty entry is the empty value, as in Kubernetes: "()" and "(a,)" both hold "".
          req.values.insert(value);
          if (scan.Consume(")")) break;
          if (!scan.Consume(",")) return SyntaxError("label", text, scan.pos());
        }
      } else {
        req.op = Op::kExists;
      }
    }
    if (!ValidLabelKey(req.key)) return SyntaxError("label", text, scan.pos());
    for (const std::string& value : req.values) {
      if (!ValidLabelValue(value)) return SyntaxError("label", text, scan.pos());
    }
    selector.requirements_.push_back(std::move(req));
    if (scan.AtEnd()) break;
    if (!scan.Consume(",")) return SyntaxError("label", text, scan.pos());
  }
  return selector;
}

absl::StatusOr<LabelSelector> LabelSelector::FromJson(const Json& selector) {
  LabelSelector out;
  if (selector.is_null()) return out;
  if (!selector.is_object()) return absl::InvalidArgumentError("label selector must be an object");
  if (auto it = selector.find("matchLabels"); it != selector.end() && !it->is_null()) {
    if (!it->is_object()) return absl::InvalidArgumentError("matchLabels must be an object");
    for (const auto& [key, value] : it->items()) {
      if (!value.is_string()) {
        return absl::InvalidArgumentError(absl::StrCat("matchLabels[", key, "] must be a string"));
      }
      if (!ValidLabelKey(key) || !ValidLabelValue(value.get<std::string>())) {
        return absl::InvalidArgumentError(
            absl::StrCat("matchLabels: invalid label \"", key, "\": \"", value.get<std::string>(),
                         "\""));
      }
      out.requirements_.push_back({key, Op::kEquals, {value.get<std::string>()}});
    }
  }
  if (auto it = selector.find("matchExpressions"); it != selector.end() && !it->is_null()) {
    if (!it->is_array()) return absl::InvalidArgumentError("matchExpressions must be a list");
    for (const Json& expr : *it) {
      if (!expr.is_object() || !expr.contains("key") || !expr["key"].is_string()) {
        return absl::InvalidArgumentError("matchExpressions entries need a string key");
      }
      Requirement req;
      req.key = expr["key"].get<std::string>();
      if (!ValidLabelKey(req.key)) {
        return absl::InvalidArgumentError(
            absl::StrCat("matchExpressions: invalid label key \"", req.key, "\""));
      }
      std::string op = StringAt(expr, "operator");  // Json::value() would throw on a non-string
      if (op == "In") req.op = Op::kIn;
      else if (op == "NotIn") req.op = Op::kNotIn;
      else if (op == "Exists") req.op = Op::kExists;
      else if (op == "DoesNotExist") req.op = Op::kDoesNotExist;
      else return absl::InvalidArgumentError(absl::StrCat("unknown selector operator \"", op, "\""));
      if (auto values = expr.find("values"); values != expr.end() && values->is_array()) {
        for (const Json& v : *values) {
          if (!v.is_string()) continue;
          // What Parse accepts, so that ToString() reads back (and as the API server requires).
          if (!ValidLabelValue(v.get<std::string>())) {
            return absl::InvalidArgumentError(absl::StrCat(
                "matchExpressions: invalid value \"", v.get<std::string>(), "\" for key \"",
                req.key, "\""));
          }
          req.values.insert(v.get<std::string>());
        }
      }
      if ((req.op == Op::kIn || req.op == Op::kNotIn) && req.values.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("operator ", op, " for key \"", req.key, "\" needs values"));
      }
      out.requirements_.push_back(std::move(req));
    }
  }
  return out;
}

LabelSelector LabelSelector::FromMap(const std::map<std::string, std::string>& labels) {
  LabelSelector out;
  for (const auto& [key, value] : labels) out.requirements_.push_back({key, Op::kEquals, {value}});
  return out;
}

bool LabelSelector::Matches(const std::map<std::string, std::string>& labels) const {
  for (const Requirement& req : requirements_) {
    auto it = labels.find(req.key);
    const bool has = it != labels.end();
    switch (req.op) {
      case Op::kEquals:
      case Op::kIn:
        if (!has || !req.values.contains(it->second)) return false;
        break;
      case Op::kNotEquals:
      case Op::kNotIn:
        if (has && req.values.contains(it->second)) return false;
        break;
      case Op::kExists:
        if (!has) return false;
        break;
      case Op::kDoesNotExist:
        if (has) return false;
        break;
    }
  }
  return true;
}

std::string LabelSelector::ToString() const {
  std::vector<std::string> parts;
  for (const Requirement& req : requirements_) {
    switch (req.op) {
      case Op::kEquals: parts.push_back(absl::StrCat(req.key, "=", *req.values.begin())); break;
      case Op::kNotEquals: parts.push_back(absl::StrCat(req.key, "!=", *req.values.begin())); break;
      case Op::kIn:
        parts.push_back(absl::StrCat(req.key, " in (", absl::StrJoin(req.values, ","), ")"));
        break;
      case Op::kNotIn:
        parts.push_back(absl::StrCat(req.key, " notin (", absl::StrJoin(req.values, ","), ")"));
        break;
      case Op::kExists: parts.push_back(req.key); break;
      case Op::kDoesNotExist: parts.push_back(absl::StrCat("!", req.key)); break;
    }
  }
  return absl::StrJoin(parts, ",");
}

absl::StatusOr<FieldSelector> FieldSelector::Parse(std::string_view text) {
  FieldSelector selector;
  Scanner scan(text);
  if (scan.AtEnd()) return selector;
  while (true) {
    Requirement req;
    req.field = scan.Word();
    if (req.field.empty()) return SyntaxError("field", text, scan.pos());
    if (scan.Consume("==") || scan.Consume("=")) {
      req.negate = false;
    } else if (scan.Consume("!=")) {
      req.negate = true;
    } else {
      return SyntaxError("field", text, scan.pos());
    }
    req.value = scan.Word();
    selector.requirements_.push_back(std::move(req));
    if (scan.AtEnd()) break;
    if (!scan.Consume(",")) return SyntaxError("field", text, scan.pos());
  }
  return selector;
}

absl::Status FieldSelector::Validate(const Json& sample, const FieldGetter& getter) const {
  for (const Requirement& req : requirements_) {
    if (!getter(sample, req.field).has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat("field label not supported: ", req.field));
    }
  }
  return absl::OkStatus();
}

bool FieldSelector::Matches(const Json& object, const FieldGetter& getter) const {
  for (const Requirement& req : requirements_) {
    std::optional<std::string> value = getter(object, req.field);
    if (!value.has_value()) return false;
    if ((*value == req.value) == req.negate) return false;
  }
  return true;
}

std::optional<std::string> DefaultFieldGetter(const Json& object, std::string_view field) {
  if (field == "metadata.name") return Name(object);
  if (field == "metadata.namespace") return Namespace(object);
  return std::nullopt;
}

}  // namespace nereid::kube
