#include "globalmanager/health_server.h"

#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/log/log.h"
#include "common/net/host_port.h"
#include "common/status/macros.h"
#include "globalmanager/config.h"
#include "prometheus/text_serializer.h"

namespace nereid::gm {
namespace {

http::HttpResponse Text(int status, std::string body) {
  return http::HttpResponse{status, std::move(body), "text/plain", {}};
}

}  // namespace

absl::StatusOr<std::unique_ptr<HealthServer>> HealthServer::Start(
    const std::string& listen, std::shared_ptr<prometheus::Registry> registry,
    Handlers handlers) {
  ASSIGN_OR_RETURN(net::HostPort address, net::ParseHostPort(listen));
  std::unique_ptr<HealthServer> self(new HealthServer(std::move(handlers), std::move(registry)));
  http::HttpListenerOptions options;
  options.host = address.host;
  options.port = address.port;
  options.threads = 2;
  options.max_connections = 1024;
  options.max_body_bytes = 4096;  // no route takes a body
  absl::StatusOr<std::unique_ptr<http::HttpListener>> listener = http::HttpListener::Start(
      options, [server = self.get()](const http::HttpRequest& request) {
        return server->Serve(request);
      });
  if (!listener.ok()) {
    return absl::UnavailableError(
        absl::StrCat("--http-listen ", listen, ": ", listener.status().message()));
  }
  self->listener_ = std::move(*listener);
  LOG(INFO) << "health: /healthz /readyz /metrics on " << address.host << ":" << self->port();
  return self;
}

http::HttpResponse HealthServer::Serve(const http::HttpRequest& request) const {
  const bool known =
      request.path == "/healthz" || request.path == "/readyz" || request.path == "/metrics";
  if (!known) return Text(404, "not found\n");
  if (request.method != "GET" && request.method != "HEAD") {
    http::HttpResponse response = Text(405, "method not allowed\n");
    response.headers.emplace_back("Allow", "GET, HEAD");
    return response;
  }
  if (request.path == "/metrics") {
    if (handlers_.before_metrics) handlers_.before_metrics();
    std::ostringstream out;
    prometheus::TextSerializer().Serialize(out, registry_->Collect());
    return http::HttpResponse{200, out.str(), "text/plain; version=0.0.4; charset=utf-8", {}};
  }
  // A failed liveness check is 500 (the kubelet restarts the GM); not ready is 503.
  const bool liveness = request.path == "/healthz";
  const std::function<Probe()>& check = liveness ? handlers_.healthy : handlers_.ready;
  const Probe probe = check ? check() : Probe{};
  if (probe.ok) return Text(200, "ok\n");
  return Text(liveness ? 500 : 503, probe.reason + "\n");
}

HealthServer::~HealthServer() { Stop(); }

void HealthServer::Stop() {
  if (listener_ != nullptr) listener_->Stop();
}

}  // namespace nereid::gm
