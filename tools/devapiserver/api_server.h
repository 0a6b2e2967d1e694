#pragma once

// The HTTP front of devapiserver: Kubernetes REST paths, discovery, health, OpenAPI index, tables
// and streaming watches over cpp-httplib, on top of a Store. Every error body is a metav1.Status.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/time/clock.h"
#include "tools/devapiserver/request_counter.h"
#include "tools/devapiserver/storage.h"

namespace httplib {
class Server;
}
namespace nereid::http {
class HttplibBacklog;
}

namespace nereid::devapi {

struct ApiServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;                  // 0: any free port
  std::string tls_cert_file;     // both set: HTTPS
  std::string tls_key_file;
  size_t threads = 64;           // each open watch and each idle keep-alive connection holds one
  absl::Duration bookmark_interval = absl::Seconds(15);
  absl::Duration heartbeat_interval = absl::Seconds(15);
  // Upper bound for a watch without timeoutSeconds (upstream: 30–60 min).
  absl::Duration max_watch_timeout = absl::Minutes(30);
  Clock* clock = Clock::Real();
  // Serve /debug/faults (fault_injector.h): tests make requests fail and watches expire.
  bool debug_faults = false;
};

class ApiServer {
 public:
  ApiServer(Store* store, ApiServerOptions options);
  ~ApiServer();

  // Binds the listening socket; returns the port.
  absl::StatusOr<int> Bind();
  // Serves until Stop(); call after Bind().
  absl::Status Run();
  // Ends watches, then stops the listener; Run() returns. Safe from any thread.
  void Stop();
  bool running() const;
  // "http://127.0.0.1:41233"
  std::string url() const;
  // Every request served but /debug/requests itself, by verb, resource and user agent.
  RequestCounter& requests() { return requests_; }

 private:
  class Handler;
  Store* store_;
  ApiServerOptions options_;
  std::unique_ptr<httplib::Server> server_;
  RequestCounter requests_;
  std::unique_ptr<Handler> handler_;
  int port_ = 0;
  std::unique_ptr<http::HttplibBacklog> backlog_;  // cpp-httplib's backlog of 5 made SOMAXCONN
};

}  // namespace nereid::devapi
