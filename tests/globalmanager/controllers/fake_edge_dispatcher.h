#pragma once

// FakeEdgeDispatcher: records what the controllers want each node to hold (the hub's registry)
// and every call, so controller tests assert the state of the world without a gRPC hub.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "common/net/edge_protocol.h"
#include "globalmanager/controllers/edge_dispatcher.h"
#include "globalmanager/edgehub/report_ownership.h"

namespace nereid::gm::testing {

class FakeEdgeDispatcher final : public EdgeDispatcher {
 public:
  struct Call {
    bool upsert = false;
    std::string node;
    std::string key;  // "Kind/namespace/name"
    std::string version;
  };

  absl::Status Upsert(std::string_view node,
                      std::shared_ptr<const edge::v1::Resource> resource) override {
    if (absl::Status s = net::ValidateResource(*resource); !s.ok()) return s;
    absl::MutexLock lock(&mu_);
    const std::string key = net::ObjectKey(resource->ref());
    calls_.push_back({true, std::string(node), key, resource->version()});
    desired_[std::string(node)][key] = *resource;
    return absl::OkStatus();
  }

  absl::Status Remove(std::string_view node, const edge::v1::ObjectRef& ref) override {
    if (absl::Status s = net::ValidateRef(ref); !s.ok()) return s;
    absl::MutexLock lock(&mu_);
    const std::string key = net::ObjectKey(ref);
    calls_.push_back({false, std::string(node), key, ""});
    auto it = desired_.find(std::string(node));
    if (it != desired_.end()) it->second.erase(key);
    return absl::OkStatus();
  }

  // What `node` should hold under `key` ("Dataset/default/d1"), if anything.
  std::optional<edge::v1::Resource> Get(const std::string& node, const std::string& key) const {
    absl::MutexLock lock(&mu_);
    auto it = desired_.find(node);
    if (it == desired_.end()) return std::nullopt;
    auto obj = it->second.find(key);
    if (obj == it->second.end()) return std::nullopt;
    return obj->second;
  }
  bool Holds(const std::string& node, const std::string& key) const {
    return Get(node, key).has_value();
  }
  // The hub's ownership check of `report` from `node` against this registry
  // (RefuseForeignReport, as EdgeHub makes it before a report reaches a controller).
  std::optional<ReportOutcome> RefuseForeign(std::string_view node,
                                             const edge::v1::StatusReport& report) const {
    const std::string key = net::ObjectKey(report.ref());
    std::optional<edge::v1::Resource> sent = Get(std::string(node), key);
    return RefuseForeignReport(node, sent.has_value() ? &sent->ref() : nullptr,
                               !NodesOf(key).empty(), report);
  }
  // Nodes whose registry has `key`.
  std::vector<std::string> NodesOf(const std::string& key) const {
    absl::MutexLock lock(&mu_);
    std::vector<std::string> nodes;
    for (const auto& [node, objects] : desired_) {
      if (objects.contains(key)) nodes.push_back(node);
    }
    return nodes;
  }
  std::vector<Call> Calls() const {
    absl::MutexLock lock(&mu_);
    return calls_;
  }
  int CountUpserts(const std::string& key) const {
    absl::MutexLock lock(&mu_);
    int n = 0;
    for (const Call& c : calls_) n += c.upsert && c.key == key ? 1 : 0;
    return n;
  }

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, std::map<std::string, edge::v1::Resource>> desired_ ABSL_GUARDED_BY(mu_);
  std::vector<Call> calls_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nereid::gm::testing
