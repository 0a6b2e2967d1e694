#include "tools/devapiserver/request_counter.h"

#include <cctype>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tools/devapiserver/request.h"

namespace nereid::devapi {

std::string KubeVerb(std::string_view method, bool collection, bool watch) {
  if (watch) return "watch";
  if (method == "GET" || method == "HEAD") return collection ? "list" : "get";
  if (method == "POST") return "create";
  if (method == "PUT") return "update";
  if (method == "PATCH") return "patch";
  if (method == "DELETE") return collection ? "deletecollection" : "delete";
  std::string lower(method);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower;
}

RequestKind ClassifyRequest(std::string_view method, const std::vector<std::string>& path_parts,
                            bool watch_param) {
  RequestKind kind;
  absl::StatusOr<Target> target = ParseTarget(path_parts);
  if (!target.ok()) {
    kind.verb = KubeVerb(method, /*collection=*/false, /*watch=*/false);
    kind.resource = absl::StrCat("/", absl::StrJoin(path_parts, "/"));
    return kind;
  }
  kind.verb = KubeVerb(method, target->name.empty(), target->watch || watch_param);
  kind.group = target->group;
  kind.resource = target->subresource.empty()
                      ? target->resource
                      : absl::StrCat(target->resource, "/", target->subresource);
  return kind;
}

void RequestCounter::Record(const RequestKind& kind, std::string_view user_agent) {
  absl::MutexLock lock(&mu_);
  ++counts_[Key(kind.verb, kind.group, kind.resource, std::string(user_agent))];
}

kube::Json RequestCounter::Snapshot() const {
  absl::MutexLock lock(&mu_);
  kube::Json rows = kube::Json::array();
  int64_t total = 0;
  for (const auto& [key, count] : counts_) {
    const auto& [verb, group, resource, agent] = key;
    rows.push_back({{"verb", verb},
                    {"group", group},
                    {"resource", resource},
                    {"userAgent", agent},
                    {"count", count}});
    total += count;
  }
  return {{"total", total}, {"requests", std::move(rows)}};
}

void RequestCounter::Reset() {
  absl::MutexLock lock(&mu_);
  counts_.clear();
}

}  // namespace nereid::devapi
