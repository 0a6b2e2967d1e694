// The LC REST server's transport under hostile or broken clients: many slow clients, bodies over
// the limit without a Content-Length, silent connections, and a clean stop.

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "common/http/http_listener.h"
#include "localcontroller/server/lc_server.h"
#include "tests/localcontroller/server/lc_server_fixture.h"
#include "tests/support/loopback_connection.h"

namespace nereid::lc::server {
namespace {

using testing::LoopbackConnection;

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
  std::vector<LoopbackConnection> slow;
  for (int i = 0; i < 1000; ++i) {
    slow.emplace_back(f.server->port());
    REQUIRE(slow.back().Send("POST /sedna/workers/edgeworker-x1/info HTTP/1.1\r\nHost: lc\r\n"));
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
  REQUIRE(slow[500].Send(absl::StrCat("Content-Type: application/json\r\nContent-Length: ",
                                       strlen(kSdkBody), "\r\n\r\n", kSdkBody)));
  CHECK_THAT(slow[500].ReadSome(64, absl::Seconds(5)), Catch::StartsWith("HTTP/1.1 200"));
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
  LoopbackConnection silent(f.server->port());
  LoopbackConnection halfway(f.server->port());
  REQUIRE(halfway.Send("GET /healthz HTTP/1.1\r\n"));
  CHECK(silent.ReadUntilClosed(absl::Seconds(10)).closed);
  CHECK(halfway.ReadUntilClosed(absl::Seconds(10)).closed);
  httplib::Result health = f.client->Get("/healthz");
  REQUIRE(health);
  CHECK(health->status == 200);
}

TEST_CASE("a client that half-closes gets its answer and then the close", "[lc][server]") {
  Fixture f;  // idle timeout 10 s: the close must come from the client's FIN, not the timeout
  LoopbackConnection client(f.server->port());
  REQUIRE(client.Send("GET /healthz HTTP/1.1\r\nHost: lc\r\n\r\n"));
  REQUIRE(client.HalfClose());
  LoopbackConnection::Drained answer = client.ReadUntilClosed(absl::Seconds(3));
  CHECK_THAT(answer.data, Catch::StartsWith("HTTP/1.1 200"));
  CHECK(answer.closed);
}

TEST_CASE("stop closes the listener and every connection, and frees the port", "[lc][server]") {
  const size_t files_before = OpenFileCount();
  int port = 0;
  {
    Fixture f;
    port = f.server->port();
    LoopbackConnection open_connection(port);
    REQUIRE(open_connection.Send("GET /healthz HTTP/1.1\r\n"));
    f.server->Stop();
    CHECK(open_connection.ReadUntilClosed(absl::Seconds(5)).closed);
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
