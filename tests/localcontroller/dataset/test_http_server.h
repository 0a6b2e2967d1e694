#pragma once

// An in-process cpp-httplib server on 127.0.0.1 (port chosen by the kernel) for dataset tests.
// Handlers that stall wait on release() (bounded), so the server can always shut down.

#include <catch2/catch.hpp>

#include <atomic>
#include <string>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "common/http/httplib_backlog.h"
#include "httplib.h"
#include "tests/fakes/eventually.h"

namespace nereid::lc::dataset::testing {

class TestServer {
 public:
  TestServer() {
    port_ = server_.bind_to_any_port("127.0.0.1");
    REQUIRE(backlog_.Widen().ok());
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    REQUIRE(fakes::Eventually([this] { return server_.is_running(); }));
  }
  ~TestServer() {
    if (!release_.HasBeenNotified()) release_.Notify();
    server_.stop();
    thread_.join();
  }
  httplib::Server& server() { return server_; }
  std::string Url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  int port() const { return port_; }
  absl::Notification& release() { return release_; }
  std::atomic<int>& requests() { return requests_; }

 private:
  httplib::Server server_;
  nereid::http::HttplibBacklog backlog_{server_};  // before the constructor binds
  int port_ = 0;
  std::thread thread_;
  absl::Notification release_;
  std::atomic<int> requests_{0};
};

}  // namespace nereid::lc::dataset::testing
