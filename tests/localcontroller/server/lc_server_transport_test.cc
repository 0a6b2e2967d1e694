// The LC REST server's transport under hostile or broken clients: many slow clients, bodies over
// the limit without a Content-Length, silent connections, and a clean stop.

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "common/http/http_listener.h"
#include "localcontroller/dataset/unique_fd.h"
#include "localcontroller/server/lc_server.h"
#include "tests/localcontroller/server/lc_server_fixture.h"

namespace nereid::lc::server {
namespace {

using dataset::UniqueFd;

UniqueFd ConnectTo(int port) {
  UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  REQUIRE(fd.valid());
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
  return fd;
}

void SendAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t sent = send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    REQUIRE(sent > 0);
    bytes.remove_prefix(static_cast<size_t>(sent));
  }
}

struct Drained {
  std::string data;
  bool closed = false;  // the peer closed the connection (read returned 0 or an error)
};

// Reads what the peer sends until it closes the connection or `timeout` passes.
Drained ReadUntilClosed(int fd, absl::Duration timeout) {
  Drained drained;
  const absl::Time deadline = absl::Now() + timeout;
  char buffer[4096];
  while (!drained.closed && absl::Now() < deadline) {
    pollfd poller{fd, POLLIN, 0};
    if (poll(&poller, 1, 100) <= 0) continue;
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n <= 0) {
      drained.closed = true;
    } else {
      drained.data.append(buffer, static_cast<size_t>(n));
    }
  }
  return drained;
}

size_t OpenFileCount() {
  size_t count = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    ++count;
  }
  return count;
}

TEST_CASE("a thousand slow clients do not stop worker reports from being served", "[lc][server]") {
  REQUIRE(http::RaiseOpenFileLimit().value() >= 2100);  // 1,000 client and 1,000 server sockets
  Fixture f;
  // Slowloris: each connection sends a request line and one header, then waits (a real attacker
  // adds a header now and then to stay under the idle timeout). With a thread per connection
  // these held every thread of the server.
  std::vector<UniqueFd> slow;
  for (int i = 0; i < 1000; ++i) {
    slow.push_back(ConnectTo(f.server->port()));
    SendAll(slow.back().get(), "POST /sedna/workers/edgeworker-x1/info HTTP/1.1\r\nHost: lc\r\n");
  }
  f.client->set_connection_timeout(5, 0);
  f.client->set_read_timeout(5, 0);
  const absl::Time start = absl::Now();
  httplib::Result report =
      f.client->Post("/sedna/workers/edgeworker-x1/info", kSdkBody, "application/json");
  REQUIRE(report);
  CHECK(report->status == 200);
  CHECK(f.sink.size() == 1);
  httplib::Result health = f.client->Get("/healthz");
  REQUIRE(health);
  CHECK(health->status == 200);
  INFO("report + health took " << absl::FormatDuration(absl::Now() - start));
  CHECK(absl::Now() - start < absl::Seconds(2));
  // The slow requests are still waiting, not dropped: one of them completes normally.
  SendAll(slow[500].get(),
          absl::StrCat("Content-Type: application/json\r\nContent-Length: ", strlen(kSdkBody),
                       "\r\n\r\n", kSdkBody));
  char reply[64] = {};
  REQUIRE(read(slow[500].get(), reply, sizeof(reply) - 1) > 0);
  CHECK_THAT(std::string(reply), Catch::StartsWith("HTTP/1.1 200"));
  CHECK(f.sink.size() == 2);
}

TEST_CASE("a chunked body over the limit gets 413 in the shape of the path", "[lc][server]") {
  Fixture f(/*max_body=*/1024);
  const std::string piece(700, 'x');
  auto chunked = [&piece](size_t offset, httplib::DataSink& sink) {
    if (offset >= 3 * piece.size()) {
      sink.done();
    } else {
      sink.write(piece.data(), piece.size());
    }
    return true;
  };
  CheckSednaReply(f.client->Post("/sedna/workers/edgeworker-x1/info", chunked, "application/json"),
                  413, "too large");
  CheckError(f.client->Post("/api/v1/status", chunked, "application/json"), 413,
             "RequestEntityTooLarge");
  CHECK(f.sink.size() == 0);
  // A chunked body under the limit is read whole.
  auto small = [](size_t offset, httplib::DataSink& sink) {
    if (offset == 0) {
      sink.write(kSdkBody, strlen(kSdkBody));
    } else {
      sink.done();
    }
    return true;
  };
  httplib::Result ok = f.client->Post("/sedna/workers/edgeworker-x1/info", small, "application/json");
  REQUIRE(ok);
  CHECK(ok->status == 200);
  CHECK(f.sink.size() == 1);
}

TEST_CASE("a silent connection is closed after the idle timeout", "[lc][server]") {
  Fixture f(/*max_body=*/4096, /*idle_timeout=*/absl::Seconds(1));
  UniqueFd silent = ConnectTo(f.server->port());
  UniqueFd halfway = ConnectTo(f.server->port());
  SendAll(halfway.get(), "GET /healthz HTTP/1.1\r\n");
  CHECK(ReadUntilClosed(silent.get(), absl::Seconds(10)).closed);
  CHECK(ReadUntilClosed(halfway.get(), absl::Seconds(10)).closed);
  httplib::Result health = f.client->Get("/healthz");
  REQUIRE(health);
  CHECK(health->status == 200);
}

TEST_CASE("a client that half-closes gets its answer and then the close", "[lc][server]") {
  Fixture f;  // idle timeout 10 s: the close must come from the client's FIN, not the timeout
  UniqueFd client = ConnectTo(f.server->port());
  SendAll(client.get(), "GET /healthz HTTP/1.1\r\nHost: lc\r\n\r\n");
  REQUIRE(shutdown(client.get(), SHUT_WR) == 0);
  Drained answer = ReadUntilClosed(client.get(), absl::Seconds(3));
  CHECK_THAT(answer.data, Catch::StartsWith("HTTP/1.1 200"));
  CHECK(answer.closed);
}

TEST_CASE("stop closes the listener and every connection, and frees the port", "[lc][server]") {
  const size_t files_before = OpenFileCount();
  int port = 0;
  {
    Fixture f;
    port = f.server->port();
    UniqueFd open_connection = ConnectTo(port);
    SendAll(open_connection.get(), "GET /healthz HTTP/1.1\r\n");
    f.server->Stop();
    CHECK(ReadUntilClosed(open_connection.get(), absl::Seconds(5)).closed);
    f.server->Stop();  // idempotent
  }
  CHECK(OpenFileCount() == files_before);
  // The same port binds again at once (SO_REUSEADDR, no listener left behind).
  FakeView view;
  RecordingSink sink;
  worker::WorkerIntake intake{worker::WorkerIntake::Options{&sink}};
  ServerOptions options;
  options.listen = "127.0.0.1:" + std::to_string(port);
  auto again = LcServer::Start(options, &view, &intake);
  INFO(again.status());
  CHECK(again.ok());
}

}  // namespace
}  // namespace nereid::lc::server
