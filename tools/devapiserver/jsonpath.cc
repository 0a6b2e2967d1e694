#include "tools/devapiserver/jsonpath.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/strings/absl_compat.h"

namespace nereid::devapi {
namespace {

using kube::Json;

absl::Status Syntax(std::string_view path, std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("jsonpath ", ToAbsl(path), ": ", ToAbsl(what)));
}

// Follows a dotted relative path ("@.a.b" without the "@.") from `node`.
const Json* Relative(const Json& node, std::string_view dotted) {
  const Json* cur = &node;
  size_t pos = 0;
  while (pos <= dotted.size()) {
    size_t dot = dotted.find('.', pos);
    std::string_view key = dotted.substr(pos, dot == std::string_view::npos ? dotted.npos : dot - pos);
    if (!cur->is_object()) return nullptr;
    auto it = cur->find(std::string(key));
    if (it == cur->end()) return nullptr;
    cur = &*it;
    if (dot == std::string_view::npos) break;
    pos = dot + 1;
  }
  return cur;
}

std::string Unquote(std::string_view s) {
  if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front()) {
    return std::string(s.substr(1, s.size() - 2));
  }
  return std::string(s);
}

}  // namespace

absl::StatusOr<std::vector<const Json*>> EvalJsonPath(const Json& root, std::string_view path) {
  std::string_view p = path;
  if (!p.empty() && p.front() == '{') {
    if (p.back() != '}') return Syntax(path, "unclosed {");
    p = p.substr(1, p.size() - 2);
  }
  if (!p.empty() && p.front() == '$') p.remove_prefix(1);
  std::vector<const Json*> current = {&root};
  size_t i = 0;
  while (i < p.size()) {
    std::vector<const Json*> next;
    if (p[i] == '.') {
      ++i;
      size_t end = p.find_first_of(".[", i);
      std::string key(p.substr(i, end == std::string_view::npos ? p.npos : end - i));
      i = end == std::string_view::npos ? p.size() : end;
      if (key.empty()) continue;  // ".." or trailing dot
      for (const Json* node : current) {
        if (key == "*") {
          if (node->is_object() || node->is_array()) {
            for (const Json& child : *node) next.push_back(&child);
          }
        } else if (node->is_object()) {
          if (auto it = node->find(key); it != node->end()) next.push_back(&*it);
        }
      }
    } else if (p[i] == '[') {
      size_t close = p.find(']', i);
      // A filter may contain ']' inside quotes; find the ")]" that closes it.
      if (p.substr(i, 3) == "[?(") close = p.find(")]", i) == std::string_view::npos
                                               ? std::string_view::npos
                                               : p.find(")]", i) + 1;
      if (close == std::string_view::npos) return Syntax(path, "unclosed [");
      std::string_view inner = p.substr(i + 1, close - i - 1);
      i = close + 1;
      if (inner == "*") {
        for (const Json* node : current) {
          if (node->is_array() || node->is_object()) {
            for (const Json& child : *node) next.push_back(&child);
          }
        }
      } else if (!inner.empty() && inner.front() == '?') {
        // ?(@.a.b==value) or ?(@.a.b!=value)
        if (inner.size() < 4 || inner[1] != '(' || inner.back() != ')') {
          return Syntax(path, "bad filter");
        }
        std::string_view expr = inner.substr(2, inner.size() - 3);
        bool negate = false;
        size_t op = expr.find("==");
        if (op == std::string_view::npos) {
          op = expr.find("!=");
          negate = true;
        }
        if (op == std::string_view::npos || expr.substr(0, 2) != "@.") {
          return Syntax(path, "only @.field==value filters are supported");
        }
        std::string_view lhs = expr.substr(2, op - 2);
        while (!lhs.empty() && lhs.back() == ' ') lhs.remove_suffix(1);
        std::string_view rhs = expr.substr(op + 2);
        while (!rhs.empty() && rhs.front() == ' ') rhs.remove_prefix(1);
        std::string want = Unquote(rhs);
        for (const Json* node : current) {
          if (!node->is_array()) continue;
          for (const Json& item : *node) {
            const Json* v = Relative(item, lhs);
            std::string have = v == nullptr ? "" : (v->is_string() ? v->get<std::string>() : v->dump());
            bool match = v != nullptr && have == want;
            if (match != negate) next.push_back(&item);
          }
        }
      } else if (inner.front() == '\'' || inner.front() == '"') {
        std::string key = Unquote(inner);
        for (const Json* node : current) {
          if (node->is_object()) {
            if (auto it = node->find(key); it != node->end()) next.push_back(&*it);
          }
        }
      } else {
        int64_t index = 0;
        try {
          index = std::stoll(std::string(inner));
        } catch (...) {
          return Syntax(path, "bad index");
        }
        for (const Json* node : current) {
          if (!node->is_array()) continue;
          int64_t n = static_cast<int64_t>(node->size());
          int64_t at = index < 0 ? n + index : index;
          if (at >= 0 && at < n) next.push_back(&(*node)[at]);
        }
      }
    } else {
      return Syntax(path, absl::StrCat("unexpected character '", std::string(1, p[i]), "'"));
    }
    current = std::move(next);
  }
  return current;
}

}  // namespace nereid::devapi
