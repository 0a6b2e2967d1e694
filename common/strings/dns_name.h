#pragma once

// Lower-case RFC 1123 subdomains: what Kubernetes accepts as object and node names, and what a
// node name must be wherever it travels (a certificate name, a gRPC metadata value).

#include <string_view>

namespace nereid {

// At most 253 characters of dot-separated labels of 1–63 lower-case letters, digits and '-', each
// starting and ending with a letter or digit.
inline bool IsDnsSubdomain(std::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  std::size_t begin = 0;
  while (begin <= name.size()) {
    std::size_t end = name.find('.', begin);
    if (end == std::string_view::npos) end = name.size();
    const std::string_view label = name.substr(begin, end - begin);
    if (label.empty() || label.size() > 63) return false;
    if (!alnum(label.front()) || !alnum(label.back())) return false;
    for (char c : label) {
      if (!alnum(c) && c != '-') return false;
    }
    begin = end + 1;
  }
  return true;
}

}  // namespace nereid
