#pragma once

// HealthServer: the GM's operator HTTP endpoint (cpp-httplib, one listener, a few threads):
//   GET /healthz  200 "ok" while the process works; 500 with the reason after a fatal error
//   GET /readyz   200 "ok" when this replica leads and its caches synced (so a Service with two
//                 GM replicas routes edge nodes to the leader); else 503 with the reason
//   GET /metrics  Prometheus text (format 0.0.4) of the registry: edge hub + controllers
// Other paths 404, other methods 405.

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "prometheus/registry.h"

namespace httplib {
class Server;
}

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
  };

  // Binds `listen` ("127.0.0.1:8080"; port 0 picks a free one) and serves on a thread of its own.
  static absl::StatusOr<std::unique_ptr<HealthServer>> Start(
      const std::string& listen, std::shared_ptr<prometheus::Registry> registry,
      Handlers handlers);
  ~HealthServer();
  HealthServer(const HealthServer&) = delete;
  HealthServer& operator=(const HealthServer&) = delete;

  int port() const { return port_; }
  void Stop();

 private:
  HealthServer() = default;

  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace nereid::gm
