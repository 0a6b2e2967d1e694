#include "localcontroller/server/lc_server.h"

#include <pthread.h>
#include <sys/socket.h>

#include <exception>
#include <functional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/memory/memory.h"
#include "common/log/log.h"
#include "common/status/macros.h"
#include "common/strings/absl_compat.h"
#include "httplib.h"
#include "localcontroller/server/api_json.h"
#include "localcontroller/server/listen_address.h"
#include "localcontroller/server/router.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/text_serializer.h"

namespace nereid::lc::server {
namespace {

using Json = nlohmann::json;

constexpr char kJson[] = "application/json";

struct Call {
  const httplib::Request& request;
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

std::string DefaultMessage(int status, const httplib::Request& request) {
  switch (status) {
    case 400:
      return "malformed HTTP request (a body needs Content-Length or chunked encoding)";
    case 404:
      return absl::StrCat("no such path: ", request.path);
    case 413:
      return "request body is too large";
    case 414:
      return "request URI is too long";
    default:
      return std::string(ReasonForHttpCode(status));
  }
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
    ASSIGN_OR_RETURN(ListenAddress address, ParseListenAddress(options_.listen));
    host_ = address.host;
    const int threads = std::max(options_.threads, 1);
    // httplib owns the queue it gets from this factory (its API takes a raw pointer).
    server_.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    server_.set_payload_max_length(options_.max_body_bytes);
    server_.set_read_timeout(absl::ToInt64Seconds(options_.read_timeout),
                             absl::ToInt64Microseconds(options_.read_timeout) % 1000000);
    server_.set_write_timeout(absl::ToInt64Seconds(options_.write_timeout),
                              absl::ToInt64Microseconds(options_.write_timeout) % 1000000);
    server_.set_keep_alive_max_count(100);
    // httplib's default also sets SO_REUSEPORT, which would let a second process bind the same
    // port and receive part of the worker reports; a busy port must be an error instead.
    server_.set_socket_options([](socket_t sock) {
      int yes = 1;
      setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    });

    auto dispatch = [this](const httplib::Request& request, httplib::Response& response) {
      Dispatch(request, response);
    };
    // Every method reaches the router, which answers 404/405 itself.
    server_.Get(".*", dispatch);
    server_.Delete(".*", httplib::Server::Handler(dispatch));
    server_.Post(".*", httplib::Server::Handler(dispatch));
    server_.Put(".*", httplib::Server::Handler(dispatch));
    server_.Patch(".*", httplib::Server::Handler(dispatch));
    server_.Options(".*", dispatch);
    // Fills the body of errors httplib produces itself (413, 414, 400 for unparsable requests).
    server_.set_error_handler(httplib::Server::HandlerWithResponse(
        [](const httplib::Request& request, httplib::Response& response) {
          if (!response.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
          response.set_content(
              ErrorBody(request.path, response.status, DefaultMessage(response.status, request)),
              kJson);
          return httplib::Server::HandlerResponse::Handled;
        }));
    // A safety net only: Dispatch catches what a handler throws.
    server_.set_exception_handler(
        [](const httplib::Request& request, httplib::Response& response, std::exception_ptr ep) {
          std::string what = "unknown exception";
          try {
            std::rethrow_exception(ep);
          } catch (const std::exception& e) {
            what = e.what();
          } catch (...) {
          }
          LOG(ERROR) << "lc server: " << request.method << " " << request.path << ": " << what;
          response.status = 500;
          response.set_content(ErrorBody(request.path, 500, "internal error"), kJson);
        });
    server_.set_logger([this](const httplib::Request& request, const httplib::Response& response) {
      requests_.Add({{"code", std::to_string(response.status)}}).Increment();
      LOG(DEBUG) << "lc server: " << request.method << " " << request.path << " -> "
                 << response.status;
    });

    if (address.port == 0) {
      port_ = server_.bind_to_any_port(address.host);
      if (port_ <= 0) {
        return absl::UnavailableError(
            absl::StrCat("cannot bind the REST listener to ", address.host, ":0"));
      }
    } else {
      if (!server_.bind_to_port(address.host, address.port)) {
        return absl::UnavailableError(absl::StrCat("cannot bind the REST listener to ",
                                                   address.ToString(),
                                                   " (address in use or not local?)"));
      }
      port_ = address.port;
    }
    thread_ = std::thread([this] {
      pthread_setname_np(pthread_self(), "lc-http");
      if (!server_.listen_after_bind()) LOG(ERROR) << "lc server: listener ended with an error";
    });
    // httplib 0.11 has no wait_until_ready(): poll with a deadline.
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (!server_.is_running()) {
      if (absl::Now() > deadline) {
        Stop();
        return absl::UnavailableError("the REST listener did not start within 10 s");
      }
      absl::SleepFor(absl::Milliseconds(1));
    }
    LOG(INFO) << "lc server: listening on " << url();
    return absl::OkStatus();
  }

  void Stop() {
    absl::MutexLock lock(&stop_mu_);
    if (stopped_) return;
    stopped_ = true;
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }

  int port() const { return port_; }
  std::string url() const {
    return absl::StrCat("http://", ListenAddress{host_, port_}.ToString());
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
    router_.Add("GET", "/metrics", [this](const Call&) {
      std::vector<prometheus::MetricFamily> families = registry_->Collect();
      std::vector<prometheus::MetricFamily> state = view_->CollectMetrics();
      families.insert(families.end(), std::make_move_iterator(state.begin()),
                      std::make_move_iterator(state.end()));
      return Reply{200, prometheus::TextSerializer().Serialize(families),
                   "text/plain; version=0.0.4; charset=utf-8"};
    });
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

  void Dispatch(const httplib::Request& request, httplib::Response& response) {
    Reply reply;
    Router<Handler>::Match match = router_.Find(request.method, request.path);
    switch (match.kind) {
      case Router<Handler>::Match::Kind::kNotFound:
        reply = Reply{404, ErrorBody(request.path, 404, DefaultMessage(404, request)), kJson};
        break;
      case Router<Handler>::Match::Kind::kMethodNotAllowed: {
        const std::string allow = absl::StrJoin(match.allowed, ", ");
        response.set_header("Allow", allow);
        reply = Reply{405,
                      ErrorBody(request.path, 405,
                                absl::StrCat("method ", request.method, " is not allowed on ",
                                             request.path, "; allowed: ", allow)),
                      kJson};
        break;
      }
      case Router<Handler>::Match::Kind::kFound:
        try {
          reply = (*match.handler)(Call{request, match.params});
        } catch (const std::exception& e) {
          LOG(ERROR) << "lc server: " << request.method << " " << request.path << ": " << e.what();
          reply = Reply{500, ErrorBody(request.path, 500, "internal error"), kJson};
        }
        break;
    }
    response.status = reply.status;
    response.set_content(reply.body, reply.content_type.c_str());
  }

  const ServerOptions options_;
  StateView* const view_;
  worker::WorkerIntake* const intake_;
  const std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& requests_;
  Router<Handler> router_;
  httplib::Server server_;
  std::string host_;
  int port_ = 0;
  std::thread thread_;
  absl::Mutex stop_mu_;
  bool stopped_ ABSL_GUARDED_BY(stop_mu_) = false;
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

}  // namespace nereid::lc::server
