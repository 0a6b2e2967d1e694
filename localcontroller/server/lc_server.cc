#include "localcontroller/server/lc_server.h"

#include <exception>
#include <functional>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/memory/memory.h"
#include "common/http/http_listener.h"
#include "common/log/log.h"
#include "common/net/host_port.h"
#include "common/status/macros.h"
#include "common/strings/absl_compat.h"
#include "localcontroller/server/api_json.h"
#include "localcontroller/server/router.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/text_serializer.h"

namespace nereid::lc::server {
namespace {

using Json = nlohmann::json;
using http::HttpListener;
using http::HttpListenerOptions;
using http::HttpRequest;
using http::HttpResponse;

constexpr char kJson[] = "application/json";

struct Call {
  const HttpRequest& request;
  const PathParams& params;
};

struct Reply {
  int status = 200;
  std::string body;
  std::string content_type = kJson;
};

using Handler = std::function<Reply(const Call&)>;

Reply JsonReply(int status, const Json& body) { return Reply{status, Dump(body), kJson}; }

Reply ErrorReply(int status, std::string_view message) {
  return JsonReply(status, ErrorJson(status, message));
}

Reply StatusReply(const absl::Status& status) {
  return ErrorReply(HttpCodeForStatus(status), ToStd(status.message()));
}

bool IsSednaPath(const std::string& path) { return absl::StartsWith(path, "/sedna/"); }

// The error body for `status` in the shape the path's clients read.
std::string ErrorBody(const std::string& path, int status, std::string_view message) {
  return Dump(IsSednaPath(path) ? SednaReplyJson(status, message) : ErrorJson(status, message));
}


}  // namespace

class LcServer::Impl {
 public:
  Impl(const ServerOptions& options, StateView* view, worker::WorkerIntake* intake)
      : options_(options),
        view_(view),
        intake_(intake),
        registry_(options.registry ? options.registry : std::make_shared<prometheus::Registry>()),
        requests_(prometheus::BuildCounter()
                      .Name("nereid_lc_http_requests_total")
                      .Help("HTTP requests served by the LC's REST server, by status code")
                      .Register(*registry_)) {
    AddRoutes();
  }

  ~Impl() { Stop(); }

  absl::Status Listen() {
    if (!options_.metrics_listen.empty()) RETURN_IF_ERROR(ListenForMetrics());
    ASSIGN_OR_RETURN(net::HostPort address,
                     net::ParseHostPort(options_.listen, net::kAllInterfaces));
    HttpListenerOptions listener;
    listener.host = address.host;
    listener.port = address.port;
    listener.max_body_bytes = options_.max_body_bytes;
    listener.threads = options_.threads;
    listener.max_connections = options_.max_connections;
    listener.idle_timeout = options_.idle_timeout;
    host_ = address.host;
    ASSIGN_OR_RETURN(listener_, HttpListener::Start(listener, [this](const HttpRequest& request) {
                       return Dispatch(request);
                     }));
    LOG(INFO) << "lc server: listening on " << url();
    return absl::OkStatus();
  }

  void Stop() {
    if (listener_ != nullptr) listener_->Stop();
    if (metrics_listener_ != nullptr) metrics_listener_->Stop();
  }

  int port() const { return listener_->port(); }
  int metrics_port() const { return metrics_listener_ ? metrics_listener_->port() : 0; }
  std::string url() const {
    return absl::StrCat("http://", net::HostPort{host_, port()}.ToString());
  }

 private:
  void AddRoutes() {
    router_.Add("POST", "/sedna/workers/{worker}/info", [this](const Call& call) {
      worker::IntakeReply reply = intake_->Submit(call.params.at("worker"), call.request.body);
      return JsonReply(reply.status, SednaReplyJson(reply.status, reply.message));
    });
    router_.Add("GET", "/healthz", [](const Call&) { return JsonReply(200, {{"status", "ok"}}); });
    router_.Add("GET", "/readyz", [this](const Call&) {
      absl::Status ready = view_->Ready();
      if (!ready.ok()) return ErrorReply(503, ToStd(ready.message()));
      return JsonReply(200, {{"status", "ok"}});
    });
    router_.Add("GET", "/metrics", [this](const Call&) { return MetricsReply(); });
    router_.Add("GET", "/api/v1/status", [this](const Call&) {
      absl::StatusOr<StatusInfo> status = view_->Status();
      if (!status.ok()) return StatusReply(status.status());
      return JsonReply(200, ToJson(*status));
    });
    router_.Add("GET", "/api/v1/datasets", [this](const Call&) {
      absl::StatusOr<std::vector<DatasetInfo>> datasets = view_->Datasets();
      if (!datasets.ok()) return StatusReply(datasets.status());
      Json items = Json::array();
      for (const DatasetInfo& d : *datasets) items.push_back(ToJson(d));
      return JsonReply(200, {{"items", std::move(items)}});
    });
    router_.Add("GET", "/api/v1/datasets/{namespace}/{name}", [this](const Call& call) {
      absl::StatusOr<DatasetInfo> dataset =
          view_->Dataset(call.params.at("namespace"), call.params.at("name"));
      if (!dataset.ok()) return StatusReply(dataset.status());
      return JsonReply(200, ToJson(*dataset));
    });
    router_.Add("GET", "/api/v1/models", [this](const Call&) {
      absl::StatusOr<std::vector<ModelInfo>> models = view_->Models();
      if (!models.ok()) return StatusReply(models.status());
      Json items = Json::array();
      for (const ModelInfo& m : *models) items.push_back(ToJson(m));
      return JsonReply(200, {{"items", std::move(items)}});
    });
    router_.Add("GET", "/api/v1/models/{namespace}/{name}", [this](const Call& call) {
      absl::StatusOr<ModelInfo> model =
          view_->Model(call.params.at("namespace"), call.params.at("name"));
      if (!model.ok()) return StatusReply(model.status());
      return JsonReply(200, ToJson(*model));
    });
    router_.Add("GET", "/api/v1/workers", [this](const Call&) {
      Json items = Json::array();
      for (const worker::WorkerRecord& w : intake_->Workers()) items.push_back(ToJson(w));
      return JsonReply(200, {{"items", std::move(items)}});
    });
  }

  Reply MetricsReply() {
    std::vector<prometheus::MetricFamily> families = registry_->Collect();
    std::vector<prometheus::MetricFamily> state = view_->CollectMetrics();
    families.insert(families.end(), std::make_move_iterator(state.begin()),
                    std::make_move_iterator(state.end()));
    return Reply{200, prometheus::TextSerializer().Serialize(families),
                 "text/plain; version=0.0.4; charset=utf-8"};
  }

  // The metrics-only listener: small (one thread, few connections), since only a scraper calls.
  absl::Status ListenForMetrics() {
    ASSIGN_OR_RETURN(net::HostPort address,
                     net::ParseHostPort(options_.metrics_listen, net::kAllInterfaces));
    HttpListenerOptions listener;
    listener.host = address.host;
    listener.port = address.port;
    listener.max_body_bytes = 1024;
    listener.threads = 1;
    listener.max_connections = 64;
    listener.idle_timeout = options_.idle_timeout;
    ASSIGN_OR_RETURN(metrics_listener_,
                     HttpListener::Start(listener, [this](const HttpRequest& request) {
                       if (request.path != "/metrics") {
                         return Answer(request.path, 404,
                                       "this port serves GET /metrics only");
                       }
                       if (request.method != "GET") {
                         HttpResponse response = Answer(request.path, 405, "use GET");
                         response.headers.emplace_back("Allow", "GET");
                         return response;
                       }
                       Reply reply = MetricsReply();
                       return HttpResponse{reply.status, std::move(reply.body),
                                           std::move(reply.content_type), {}};
                     }));
    LOG(INFO) << "lc server: metrics on http://"
              << net::HostPort{address.host, metrics_listener_->port()}.ToString() << "/metrics";
    return absl::OkStatus();
  }

  HttpResponse Dispatch(const HttpRequest& request) {
    HttpResponse response = Route(request);
    requests_.Add({{"code", std::to_string(response.status)}}).Increment();
    LOG(DEBUG) << "lc server: " << request.method << " " << request.path << " -> "
               << response.status;
    return response;
  }

  HttpResponse Route(const HttpRequest& request) {
    if (request.body_too_large) {
      return Answer(request.path, 413, "request body is too large");
    }
    Router<Handler>::Match match = router_.Find(request.method, request.path);
    switch (match.kind) {
      case Router<Handler>::Match::Kind::kNotFound:
        return Answer(request.path, 404, absl::StrCat("no such path: ", request.path));
      case Router<Handler>::Match::Kind::kMethodNotAllowed: {
        const std::string allow = absl::StrJoin(match.allowed, ", ");
        HttpResponse response =
            Answer(request.path, 405,
                   absl::StrCat("method ", request.method, " is not allowed on ", request.path,
                                "; allowed: ", allow));
        response.headers.emplace_back("Allow", allow);
        return response;
      }
      case Router<Handler>::Match::Kind::kFound:
        break;
    }
    try {
      Reply reply = (*match.handler)(Call{request, match.params});
      return HttpResponse{reply.status, std::move(reply.body), std::move(reply.content_type), {}};
    } catch (const std::exception& e) {  // a safety net: handlers return errors
      LOG(ERROR) << "lc server: " << request.method << " " << request.path << ": " << e.what();
      return Answer(request.path, 500, "internal error");
    }
  }

  // An error in the shape the path's clients read.
  static HttpResponse Answer(const std::string& path, int status, std::string_view message) {
    return HttpResponse{status, ErrorBody(path, status, message), kJson, {}};
  }

  const ServerOptions options_;
  StateView* const view_;
  worker::WorkerIntake* const intake_;
  const std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& requests_;
  Router<Handler> router_;
  std::string host_;
  std::unique_ptr<HttpListener> metrics_listener_;
  std::unique_ptr<HttpListener> listener_;  // last: stopped (joined) before the routes go
};

absl::StatusOr<std::unique_ptr<LcServer>> LcServer::Start(const ServerOptions& options,
                                                          StateView* view,
                                                          worker::WorkerIntake* intake) {
  auto impl = std::make_unique<Impl>(options, view, intake);
  if (absl::Status listening = impl->Listen(); !listening.ok()) return listening;
  return absl::WrapUnique(new LcServer(std::move(impl)));
}

LcServer::LcServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

LcServer::~LcServer() { Stop(); }

void LcServer::Stop() { impl_->Stop(); }

int LcServer::port() const { return impl_->port(); }

std::string LcServer::url() const { return impl_->url(); }

int LcServer::metrics_port() const { return impl_->metrics_port(); }

}  // namespace nereid::lc::server
