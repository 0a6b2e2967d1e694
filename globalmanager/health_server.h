#pragma once

// HealthServer: the GM's operator HTTP endpoint (common/http's HttpListener on two threads, so
// slow or idle clients in the cluster network cannot hold up the kubelet's probes):
//   GET /healthz  200 "ok" while the process works; 500 with the reason after a fatal error
//   GET /readyz   200 "ok" when this replica leads and its caches synced (so a Service with two
//                 GM replicas routes edge nodes to the leader); else 503 with the reason
//   GET /metrics  Prometheus text (format 0.0.4) of the registry: edge hub + controllers
// Other paths 404, other methods 405.

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/http/http_listener.h"
#include "prometheus/registry.h"

namespace nereid::gm {

struct Probe {
  bool ok = true;
  std::string reason;  // why not, for the response body
};

class HealthServer {
 public:
  struct Handlers {
    std::function<Probe()> healthy;
    std::function<Probe()> ready;
    std::function<void()> before_metrics;  // optional: refresh sampled gauges before a scrape
  };

  // Binds `listen` ("127.0.0.1:8080"; port 0 picks a free one) and serves until Stop().
  static absl::StatusOr<std::unique_ptr<HealthServer>> Start(
      const std::string& listen, std::shared_ptr<prometheus::Registry> registry,
      Handlers handlers);
  ~HealthServer();
  HealthServer(const HealthServer&) = delete;
  HealthServer& operator=(const HealthServer&) = delete;

  int port() const { return listener_->port(); }
  void Stop();  // idempotent

 private:
  explicit HealthServer(Handlers handlers, std::shared_ptr<prometheus::Registry> registry)
      : handlers_(std::move(handlers)), registry_(std::move(registry)) {}
  http::HttpResponse Serve(const http::HttpRequest& request) const;

  const Handlers handlers_;
  const std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<http::HttpListener> listener_;
};

}  // namespace nereid::gm
