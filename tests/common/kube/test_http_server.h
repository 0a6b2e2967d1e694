#pragma once

// An in-process HTTP(S) server on 127.0.0.1 (free port) that tests script per test with httplib
// handlers. Every request is recorded (method, decoded path, raw target, params, headers, body)
// before its response is sent, so a test can assert exactly what the client sent.

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "common/http/httplib_backlog.h"
#include "httplib.h"
#include "tests/fakes/eventually.h"

namespace nereid::testing {

struct RecordedRequest {
  std::string method;
  std::string path;    // Decoded, without the query.
  std::string target;  // As sent: path and encoded query.
  httplib::Params params;
  httplib::Headers headers;
  std::string body;

  std::string Param(const std::string& key) const {
    auto it = params.find(key);
    return it == params.end() ? "" : it->second;
  }
  std::string Header(const std::string& key) const {
    auto it = headers.find(key);
    return it == headers.end() ? "" : it->second;
  }
};

class TestHttpServer {
 public:
  TestHttpServer() : server_(std::make_unique<httplib::Server>()) { Init(); }
  // HTTPS with the given PEM files; a non-empty client_ca_path requires client certificates.
  TestHttpServer(const std::string& cert_path, const std::string& key_path,
                 const std::string& client_ca_path = "")
      : server_(std::make_unique<httplib::SSLServer>(
            cert_path.c_str(), key_path.c_str(),
            client_ca_path.empty() ? nullptr : client_ca_path.c_str())),
        https_(true) {
    Init();
  }

  ~TestHttpServer() {
    server_->stop();
    if (thread_.joinable()) thread_.join();
  }

  httplib::Server& server() { return *server_; }

  // Binds 127.0.0.1 on a free port and serves on a thread; returns once it accepts.
  void Start() {
    port_ = server_->bind_to_any_port("127.0.0.1");
    if (port_ <= 0) throw std::runtime_error("bind failed");
    if (!backlog_->Widen().ok()) throw std::runtime_error("listen failed");
    thread_ = std::thread([this] { server_->listen_after_bind(); });
    if (!fakes::Eventually([this] { return server_->is_running(); })) {
      throw std::runtime_error("server not up");
    }
  }

  int port() const { return port_; }
  std::string url() const {
    return std::string(https_ ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_);
  }

  std::vector<RecordedRequest> requests() {
    absl::MutexLock lock(&mu_);
    return requests_;
  }
  size_t request_count() {
    absl::MutexLock lock(&mu_);
    return requests_.size();
  }
  RecordedRequest last() {
    absl::MutexLock lock(&mu_);
    return requests_.empty() ? RecordedRequest{} : requests_.back();
  }

 private:
  void Init() {
    backlog_ = std::make_unique<nereid::http::HttplibBacklog>(*server_);
    server_->set_tcp_nodelay(true);  // As real API servers (Go) do; avoids Nagle delays.
    // Post-routing: the body has been read by then, and it runs before the response is sent.
    server_->set_post_routing_handler([this](const httplib::Request& req, httplib::Response&) {
      absl::MutexLock lock(&mu_);
      requests_.push_back({req.method, req.path, req.target, req.params, req.headers, req.body});
    });
  }

  std::unique_ptr<httplib::Server> server_;
  std::unique_ptr<nereid::http::HttplibBacklog> backlog_;
  bool https_ = false;
  int port_ = 0;
  std::thread thread_;
  absl::Mutex mu_;
  std::vector<RecordedRequest> requests_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nereid::testing
