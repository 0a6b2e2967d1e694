// The LC's REST server as a process on the node reaches it: raw bytes on a TCP connection to the
// real server (libmicrohttpd's request parsing, the router with the production route table, the
// handlers). One server for the whole run on 127.0.0.1; each input is one connection whose write
// side is closed after the input, so the server sees the end of the request at once.
//
// Properties: every connection is answered and closed within the deadline (no hang), the answer
// is HTTP, and no request makes the server answer 5xx (a handler that failed; the fixed view is
// always ready) other than libmicrohttpd's 505 for an HTTP version it does not speak.

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "localcontroller/server/lc_server.h"
#include "localcontroller/server/state_view.h"
#include "localcontroller/worker/worker_intake.h"
#include "tests/fuzz/fuzz_input.h"

namespace nereid {
namespace {

using lc::server::DatasetInfo;
using lc::server::ModelInfo;

// A node with one dataset and one model; anything else is NotFound.
class FixedView final : public lc::server::StateView {
 public:
  absl::Status Ready() override { return absl::OkStatus(); }
  absl::StatusOr<lc::server::StatusInfo> Status() override {
    lc::server::StatusInfo info;
    info.node = "edge-a";
    info.link.state = "connected";
    return info;
  }
  absl::StatusOr<std::vector<DatasetInfo>> Datasets() override { return std::vector{dataset_}; }
  absl::StatusOr<DatasetInfo> Dataset(std::string_view ns, std::string_view name) override {
    if (ns == dataset_.ns && name == dataset_.name) return dataset_;
    return absl::NotFoundError("no such dataset");
  }
  absl::StatusOr<std::vector<ModelInfo>> Models() override { return std::vector{model_}; }
  absl::StatusOr<ModelInfo> Model(std::string_view ns, std::string_view name) override {
    if (ns == model_.ns && name == model_.name) return model_;
    return absl::NotFoundError("no such model");
  }
  std::vector<prometheus::MetricFamily> CollectMetrics() override { return {}; }

 private:
  DatasetInfo dataset_{.ns = "default", .name = "ds1", .url = "/data/a.txt", .format = "txt"};
  ModelInfo model_{.ns = "default", .name = "m1", .url = "/models/m.pb"};
};

class AcceptingSink final : public lc::worker::ReportSink {
 public:
  absl::Status Enqueue(edge::v1::StatusReport) override { return absl::OkStatus(); }
};

struct Server {
  FixedView view;
  AcceptingSink sink;
  lc::worker::WorkerIntake intake{{.sink = &sink}};
  std::unique_ptr<lc::server::LcServer> server;
};

Server* server = nullptr;  // Lives for the whole run (never destroyed: threads serve it).

int Connect(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  FUZZ_CHECK(fd >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  FUZZ_CHECK(connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
  timeval timeout{.tv_sec = 5, .tv_usec = 0};  // far above any answer; beyond it: a hang
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  return fd;
}

}  // namespace
}  // namespace nereid

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  using namespace nereid;
  fuzz::QuietLogs();
  server = new Server;
  lc::server::ServerOptions options;
  options.listen = "127.0.0.1:0";
  options.max_body_bytes = 64 << 10;
  options.threads = 2;
  absl::StatusOr<std::unique_ptr<lc::server::LcServer>> started =
      lc::server::LcServer::Start(options, &server->view, &server->intake);
  FUZZ_CHECK(started.ok());
  server->server = std::move(*started);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nereid;
  const int fd = Connect(server->server->port());
  size_t sent = 0;
  while (sent < size) {
    const ssize_t n = send(fd, data + sent, size - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;  // libFuzzer's timeout timer
    if (n <= 0) break;  // the server may close early (a bad request line): fine
    sent += static_cast<size_t>(n);
  }
  shutdown(fd, SHUT_WR);
  std::string answer;
  char buffer[16384];
  while (true) {
    const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n == 0) break;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      // ECONNRESET: the server closed with unread input (e.g. after a 413); anything else is the
      // timeout, i.e. the connection hung.
      FUZZ_CHECK(errno == ECONNRESET);
      break;
    }
    answer.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  if (!answer.empty()) {
    FUZZ_CHECK(answer.rfind("HTTP/1.1 ", 0) == 0);
    // The first answer's status (later pipelined answers are not framed here).
    FUZZ_CHECK(answer.rfind("HTTP/1.1 5", 0) != 0 || answer.rfind("HTTP/1.1 505 ", 0) == 0);
  }
  return 0;
}
