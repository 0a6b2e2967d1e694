#pragma once

// A small method + path router for the LC's REST server, independent of the HTTP library:
// patterns are "/"-separated segments where "{name}" matches exactly one non-empty segment.
// Match() tells a found route (with its parameters) from an unknown path (404) and from a known
// path with another method (405, with the methods that are allowed for the Allow header).

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nereid::lc::server {

using PathParams = std::map<std::string, std::string>;

template <typename Handler>
class Router {
 public:
  struct Match {
    enum class Kind { kFound, kNotFound, kMethodNotAllowed };
    Kind kind = Kind::kNotFound;
    const Handler* handler = nullptr;
    PathParams params;
    std::vector<std::string> allowed;  // for kMethodNotAllowed, sorted
  };

  void Add(std::string method, std::string_view pattern, Handler handler) {
    routes_.push_back(Route{std::move(method), Split(pattern), std::move(handler)});
  }

  // HEAD is served by GET routes.
  Match Find(std::string_view method, std::string_view path) const {
    const std::vector<std::string> segments = Split(path);
    const std::string_view effective = method == "HEAD" ? std::string_view("GET") : method;
    Match match;
    for (const Route& route : routes_) {
      std::optional<PathParams> params = MatchSegments(route.segments, segments);
      if (!params.has_value()) continue;
      if (route.method == effective) {
        match.kind = Match::Kind::kFound;
        match.handler = &route.handler;
        match.params = std::move(*params);
        match.allowed.clear();
        return match;
      }
      match.kind = Match::Kind::kMethodNotAllowed;
      Insert(match.allowed, route.method);
      if (route.method == "GET") Insert(match.allowed, "HEAD");
    }
    return match;
  }

 private:
  struct Route {
    std::string method;
    std::vector<std::string> segments;
    Handler handler;
  };

  static void Insert(std::vector<std::string>& list, const std::string& method) {
    for (const std::string& m : list) {
      if (m == method) return;
    }
    list.push_back(method);
    std::sort(list.begin(), list.end());
  }

  // "/a/b/" and "/a/b" are the same path; empty segments ("//") are kept so they never match a
  // parameter.
  static std::vector<std::string> Split(std::string_view path) {
    std::vector<std::string> out;
    if (!path.empty() && path.front() == '/') path.remove_prefix(1);
    if (!path.empty() && path.back() == '/') path.remove_suffix(1);
    if (path.empty()) return out;
    size_t start = 0;
    while (true) {
      const size_t slash = path.find('/', start);
      out.emplace_back(path.substr(start, slash == std::string_view::npos ? std::string_view::npos
                                                                          : slash - start));
      if (slash == std::string_view::npos) break;
      start = slash + 1;
    }
    return out;
  }

  static std::optional<PathParams> MatchSegments(const std::vector<std::string>& pattern,
                                                 const std::vector<std::string>& path) {
    if (pattern.size() != path.size()) return std::nullopt;
    PathParams params;
    for (size_t i = 0; i < pattern.size(); ++i) {
      const std::string& p = pattern[i];
      if (p.size() > 2 && p.front() == '{' && p.back() == '}') {
        if (path[i].empty()) return std::nullopt;
        params[p.substr(1, p.size() - 2)] = path[i];
      } else if (p != path[i]) {
        return std::nullopt;
      }
    }
    return params;
  }

  std::vector<Route> routes_;
};

}  // namespace nereid::lc::server
