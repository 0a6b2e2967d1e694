#include "globalmanager/health_server.h"

#include <sys/socket.h>

#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/log/log.h"
#include "common/status/macros.h"
#include "globalmanager/config.h"
#include "httplib.h"
#include "prometheus/text_serializer.h"

namespace nereid::gm {

absl::StatusOr<std::unique_ptr<HealthServer>> HealthServer::Start(
    const std::string& listen, std::shared_ptr<prometheus::Registry> registry,
    Handlers handlers) {
  ASSIGN_OR_RETURN(HostPort address, ParseHostPort(listen));
  std::unique_ptr<HealthServer> self(new HealthServer());
  self->server_ = std::make_unique<httplib::Server>();
  httplib::Server& server = *self->server_;
  // httplib owns the queue it gets from this factory (its API takes a raw pointer).
  server.new_task_queue = [] { return new httplib::ThreadPool(2); };

  auto probe = [](std::function<Probe()> check) {
    return [check = std::move(check)](const httplib::Request&, httplib::Response& res) {
      Probe p = check ? check() : Probe{};
      if (p.ok) {
        res.set_content("ok\n", "text/plain");
      } else {
        res.status = 503;
        res.set_content(p.reason + "\n", "text/plain");
      }
    };
  };
  server.Get("/readyz", probe(handlers.ready));
  server.Get("/healthz", [check = std::move(handlers.healthy)](const httplib::Request&,
                                                               httplib::Response& res) {
    Probe p = check ? check() : Probe{};
    res.status = p.ok ? 200 : 500;
    res.set_content(p.ok ? std::string("ok\n") : p.reason + "\n", "text/plain");
  });
  server.Get("/metrics", [registry](const httplib::Request&, httplib::Response& res) {
    std::ostringstream out;
    prometheus::TextSerializer().Serialize(out, registry->Collect());
    res.set_content(out.str(), "text/plain; version=0.0.4; charset=utf-8");
  });
  auto not_allowed = [](const httplib::Request& req, httplib::Response& res) {
    res.status = (req.path == "/healthz" || req.path == "/readyz" || req.path == "/metrics")
                     ? 405
                     : 404;
    res.set_content(res.status == 405 ? "method not allowed\n" : "not found\n", "text/plain");
  };
  server.Post(".*", not_allowed);
  server.Put(".*", not_allowed);
  server.Delete(".*", not_allowed);
  server.Patch(".*", not_allowed);
  server.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (res.body.empty()) {
      res.set_content(res.status == 404 ? "not found\n" : "error\n", "text/plain");
    }
  });

  // httplib's default also sets SO_REUSEPORT, which would let a second GM on this host share the
  // port silently; SO_REUSEADDR alone still allows a quick restart.
  server.set_socket_options([](int sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  int port = address.port;
  if (port == 0) {
    port = server.bind_to_any_port(address.host);
  } else if (!server.bind_to_port(address.host, port)) {
    port = -1;
  }
  if (port <= 0) {
    return absl::UnavailableError(
        absl::StrCat("--http-listen ", listen, ": cannot listen (address in use?)"));
  }
  self->port_ = port;
  self->thread_ = std::thread([&server] { server.listen_after_bind(); });
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  while (!server.is_running() && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(2));
  if (!server.is_running()) {
    self->Stop();
    return absl::UnavailableError(absl::StrCat("--http-listen ", listen, ": server did not start"));
  }
  LOG(INFO) << "health: /healthz /readyz /metrics on " << address.host << ":" << port;
  return self;
}

HealthServer::~HealthServer() { Stop(); }

void HealthServer::Stop() {
  if (server_ != nullptr) server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace nereid::gm
