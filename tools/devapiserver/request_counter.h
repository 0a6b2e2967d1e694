#pragma once

// RequestCounter: API requests counted by verb, resource and user agent, as a real API server's
// audit log or apiserver_request_total would show them — for benchmarks that measure what a
// client (the GM) costs the API server. Served at GET /debug/requests (DELETE resets).
// Thread-safe.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/kube/object.h"

namespace nereid::devapi {

// What one request was, in the API server's terms.
struct RequestKind {
  std::string verb;      // get, list, watch, create, update, patch, delete, deletecollection
  std::string resource;  // "deployments", "jointinferenceservices/status"; a path when non-resource
  std::string group;     // "" for core and non-resource paths
};

// The Kubernetes verb of an HTTP method on a collection or a named object.
std::string KubeVerb(std::string_view method, bool collection, bool watch);
// A request by its method, its path split on '/' and whether it asked for ?watch=true.
RequestKind ClassifyRequest(std::string_view method, const std::vector<std::string>& path_parts,
                            bool watch_param);

class RequestCounter {
 public:
  void Record(const RequestKind& kind, std::string_view user_agent);
  // {"total": N, "requests": [{"verb", "group", "resource", "userAgent", "count"}, ...]} in key
  // order.
  kube::Json Snapshot() const;
  void Reset();

 private:
  using Key = std::tuple<std::string, std::string, std::string, std::string>;  // verb, group,
                                                                               // resource, agent
  mutable absl::Mutex mu_;
  std::map<Key, int64_t> counts_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nereid::devapi
