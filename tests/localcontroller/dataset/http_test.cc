// http(s) datasets: counted while streaming, with a size cap, timeouts and conditional GET.
// An in-process cpp-httplib server on 127.0.0.1 (port chosen by the kernel) plays the remote side.

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "httplib.h"
#include "localcontroller/dataset/errors.h"
#include "localcontroller/dataset/sample_counter.h"
#include "tests/localcontroller/dataset/test_http_server.h"

namespace nereid::lc::dataset {
namespace {

using testing::TestServer;

absl::StatusOr<CountResult> CountUrl(const std::string& url, const std::string& format,
                                     const HttpOptions& http = {},
                                     const Checkpoint* previous = nullptr) {
  CounterOptions options;
  options.host_root = "/nonexistent-host-root";  // http never touches it
  options.http = http;
  SampleCounter counter(options);
  CountRequest request;
  request.url = url;
  request.format = format;
  request.previous = previous;
  return counter.Count(request);
}

TEST_CASE("an http dataset is downloaded and counted", "[http]") {
  TestServer server;
  const std::string body = "a\nb\n\n  \nc";
  server.server().Get("/data.txt", [&](const httplib::Request& req, httplib::Response& res) {
    ++server.requests();
    if (req.get_header_value("If-None-Match") == "\"v1\"") {
      res.status = 304;
      return;
    }
    res.set_header("ETag", "\"v1\"");
    res.set_content(body, "text/plain");
  });
  server.server().Get("/data.csv", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("id,text\n1,\"x\ny\"\n2,z\n", "text/csv");
  });
  server.server().Get("/moved", [&](const httplib::Request&, httplib::Response& res) {
    res.set_redirect("/data.txt");
  });
  server.server().Get("/coco.json", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"images": [{"id": 1}, {"id": 2}], "annotations": []})", "application/json");
  });

  absl::StatusOr<CountResult> first = CountUrl(server.Url("/data.txt"), "txt");
  REQUIRE(first.ok());
  CHECK(first->count == 3);
  CHECK(first->bytes_read == body.size());
  CHECK(first->checkpoint.etag == "\"v1\"");

  // Unchanged on the server: a 304, nothing transferred, same count.
  absl::StatusOr<CountResult> again =
      CountUrl(server.Url("/data.txt"), "txt", {}, &first->checkpoint);
  INFO(again.status().ToString());
  REQUIRE(again.ok());
  CHECK(again->count == 3);
  CHECK(again->bytes_read == 0);
  CHECK(again->incremental);
  CHECK(server.requests() == 2);

  absl::StatusOr<CountResult> moved = CountUrl(server.Url("/moved"), "txt");
  REQUIRE(moved.ok());
  CHECK(moved->count == 3);

  absl::StatusOr<CountResult> csv = CountUrl(server.Url("/data.csv"), "csv");
  REQUIRE(csv.ok());
  CHECK(csv->count == 2);
  absl::StatusOr<CountResult> coco = CountUrl(server.Url("/coco.json"), "coco");
  REQUIRE(coco.ok());
  CHECK(coco->count == 2);
}

TEST_CASE("http errors have reasons", "[http]") {
  TestServer server;
  server.server().Get("/big", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(std::string(10000, 'x'), "text/plain");
  });
  server.server().Get("/big-chunked", [](const httplib::Request&, httplib::Response& res) {
    res.set_chunked_content_provider("text/plain", [](size_t offset, httplib::DataSink& sink) {
      if (offset >= 1'000'000) {
        sink.done();
        return true;
      }
      const std::string chunk(1000, 'y');
      return sink.write(chunk.data(), chunk.size());
    });
  });
  server.server().Get("/stall", [&](const httplib::Request&, httplib::Response& res) {
    server.release().WaitForNotificationWithTimeout(absl::Seconds(10));
    res.set_content("late\n", "text/plain");
  });
  server.server().Get("/drip", [&](const httplib::Request&, httplib::Response& res) {
    // A byte every 20 ms: never idle long enough for the read timeout, but slow overall.
    res.set_chunked_content_provider("text/plain", [&](size_t offset, httplib::DataSink& sink) {
      if (offset >= 500 || server.release().HasBeenNotified()) {
        sink.done();
        return true;
      }
      server.release().WaitForNotificationWithTimeout(absl::Milliseconds(20));
      return sink.write("x", 1);
    });
  });
  server.server().Get("/auth", [](const httplib::Request& req, httplib::Response& res) {
    if (req.get_header_value("Authorization") != "Basic dXNlcjpzM2NyZXQ=") {  // user:s3cret
      res.status = 401;
      return;
    }
    res.set_content("ok\n", "text/plain");
  });

  HttpOptions small;
  small.max_bytes = 5000;
  absl::StatusOr<CountResult> big = CountUrl(server.Url("/big"), "txt", small);
  REQUIRE_FALSE(big.ok());
  CHECK(ReasonOf(big.status()) == "DownloadTooLarge");
  absl::StatusOr<CountResult> chunked = CountUrl(server.Url("/big-chunked"), "txt", small);
  REQUIRE_FALSE(chunked.ok());
  CHECK(ReasonOf(chunked.status()) == "DownloadTooLarge");

  HttpOptions quick;
  quick.read_timeout = absl::Milliseconds(200);
  const absl::Time start = absl::Now();
  absl::StatusOr<CountResult> stalled = CountUrl(server.Url("/stall"), "txt", quick);
  REQUIRE_FALSE(stalled.ok());
  CHECK(ReasonOf(stalled.status()) == "Timeout");
  CHECK(absl::Now() - start < absl::Seconds(5));

  HttpOptions total;
  total.total_timeout = absl::Milliseconds(200);
  absl::StatusOr<CountResult> drip = CountUrl(server.Url("/drip"), "txt", total);
  REQUIRE_FALSE(drip.ok());
  CHECK(ReasonOf(drip.status()) == "Timeout");

  absl::StatusOr<CountResult> missing = CountUrl(server.Url("/missing"), "txt");
  REQUIRE_FALSE(missing.ok());
  CHECK(ReasonOf(missing.status()) == "DownloadFailed");
  CHECK(std::string(missing.status().message()).find("404") != std::string::npos);

  // Credentials become basic auth and never appear in messages.
  const std::string with_creds =
      "http://user:s3cret@127.0.0.1:" + std::to_string(server.port()) + "/auth";
  absl::StatusOr<CountResult> auth = CountUrl(with_creds, "txt");
  REQUIRE(auth.ok());
  CHECK(auth->count == 1);
  CHECK(auth->source.find("s3cret") == std::string::npos);
  const std::string wrong_creds =
      "http://user:wrong@127.0.0.1:" + std::to_string(server.port()) + "/auth";
  absl::StatusOr<CountResult> denied = CountUrl(wrong_creds, "txt");
  REQUIRE_FALSE(denied.ok());
  CHECK(ReasonOf(denied.status()) == "DownloadFailed");
  CHECK(std::string(denied.status().message()).find("wrong") == std::string::npos);
}

TEST_CASE("an unreachable server is DownloadFailed", "[http]") {
  int port = 0;
  {
    TestServer server;  // take a free port, then close it
    port = server.port();
  }
  absl::StatusOr<CountResult> result =
      CountUrl("http://127.0.0.1:" + std::to_string(port) + "/x.txt", "txt");
  REQUIRE_FALSE(result.ok());
  CHECK(ReasonOf(result.status()) == "DownloadFailed");
}

TEST_CASE("RedactUrl hides credentials", "[http]") {
  CHECK(RedactUrl("https://u:p@host/x@y") == "https://***@host/x@y");
  CHECK(RedactUrl("https://host/x@y") == "https://host/x@y");
  CHECK(RedactUrl("/local/path") == "/local/path");
}

}  // namespace
}  // namespace nereid::lc::dataset
