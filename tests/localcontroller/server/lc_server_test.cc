#include "localcontroller/server/lc_server.h"

#include <catch2/catch.hpp>

#include <string>

#include "tests/localcontroller/server/lc_server_fixture.h"

namespace nereid::lc::server {
namespace {

TEST_CASE("POST /sedna/workers/{worker}/info answers exactly as Sedna's LC", "[lc][server]") {
  Fixture f;
  // The Sedna SDK (requests.post(url, json=message)) sends JSON with this content type.
  httplib::Result ok = f.client->Post("/sedna/workers/edgeworker-x1/info", kSdkBody,
                                      "application/json");
  REQUIRE(ok);
  CHECK(ok->status == 200);
  CHECK(Body(ok) == Json{{"Status", 200}, {"Message", "OK"}});
  CHECK(f.sink.size() == 1);

  CheckSednaReply(f.client->Post("/sedna/workers/other/info", kSdkBody, "application/json"), 400,
                  "worker name(name=other) in the api is different from that(name=edgeworker-x1)");
  CheckSednaReply(f.client->Post("/sedna/workers/edgeworker-x1/info", "{\"name\":", "application/json"),
                  400, "message body failed");
  CheckSednaReply(f.client->Get("/sedna/workers/edgeworker-x1/info"), 405, "not allowed");
  CHECK(f.client->Get("/sedna/workers/edgeworker-x1/info")->get_header_value("Allow") == "POST");
  CheckSednaReply(f.client->Post("/sedna/workers/x/status", "{}", "application/json"), 404,
                  "no such path");
  CHECK(f.sink.size() == 1);

  // The operator API shows the worker's last report.
  httplib::Result workers = f.client->Get("/api/v1/workers");
  REQUIRE(workers);
  CHECK(workers->status == 200);
  Json items = Body(workers)["items"];
  REQUIRE(items.size() == 1);
  CHECK(items[0]["name"] == "edgeworker-x1");
  CHECK(items[0]["ownerKind"] == "jointinferenceservice");
  CHECK(items[0]["ownerInfo"] == Json{{"inferenceNumber", 3}});
  CHECK(items[0]["forwarded"] == true);
}

TEST_CASE("bodies over the limit get 413 in the shape of the path", "[lc][server]") {
  Fixture f(/*max_body=*/1024);
  const std::string big(4096, 'x');
  CheckSednaReply(f.client->Post("/sedna/workers/w/info", big, "application/json"), 413,
                  "too large");
  CheckError(f.client->Post("/api/v1/status", big, "application/json"), 413,
             "RequestEntityTooLarge");
  // The server is still fine afterwards.
  httplib::Result health = f.client->Get("/healthz");
  REQUIRE(health);
  CHECK(health->status == 200);
  CHECK(f.sink.size() == 0);
}

TEST_CASE("health, readiness and metrics", "[lc][server]") {
  Fixture f;
  httplib::Result health = f.client->Get("/healthz");
  REQUIRE(health);
  CHECK(health->status == 200);
  CHECK(Body(health) == Json{{"status", "ok"}});
  httplib::Result head = f.client->Head("/healthz");
  REQUIRE(head);
  CHECK(head->status == 200);
  CHECK(head->body.empty());

  httplib::Result ready = f.client->Get("/readyz");
  REQUIRE(ready);
  CHECK(ready->status == 200);
  f.view.SetReady(absl::UnavailableError("dataset monitor not running"));
  httplib::Result not_ready = f.client->Get("/readyz");
  CheckError(not_ready, 503, "ServiceUnavailable");
  CHECK(Body(not_ready)["error"]["message"] == "dataset monitor not running");

  f.client->Get("/no/such/path");
  httplib::Result metrics = f.client->Get("/metrics");
  REQUIRE(metrics);
  CHECK(metrics->status == 200);
  CHECK_THAT(metrics->get_header_value("Content-Type"), Catch::StartsWith("text/plain"));
  CHECK_THAT(metrics->body, Catch::Contains("# TYPE nereid_lc_http_requests_total counter"));
  CHECK_THAT(metrics->body, Catch::Contains("nereid_lc_http_requests_total{code=\"503\"} 1"));
  CHECK_THAT(metrics->body, Catch::Contains("nereid_lc_http_requests_total{code=\"404\"} 1"));
  CHECK_THAT(metrics->body, Catch::Contains("nereid_lc_outbox_depth 3"));
}

TEST_CASE("the operator API serves status, datasets and models with JSON errors",
          "[lc][server]") {
  Fixture f;
  httplib::Result status = f.client->Get("/api/v1/status");
  REQUIRE(status);
  CHECK(status->status == 200);
  Json s = Body(status);
  CHECK(s["node"] == "edge-a");
  CHECK(s["outboxDepth"] == 3);
  CHECK(s["cloudLink"]["state"] == "backoff");
  CHECK(s["cloudLink"]["lastError"] == "connection refused");
  CHECK(s["cloudLink"]["lastSyncTime"].is_null());

  Json list = Body(f.client->Get("/api/v1/datasets"));
  REQUIRE(list["items"].size() == 1);
  CHECK(list["items"][0]["spec"]["url"] == "/data/train.txt");
  Json one = Body(f.client->Get("/api/v1/datasets/default/ds1"));
  CHECK(one["status"]["numberOfSamples"] == 42);
  CHECK(one["status"]["lastScanTime"] == "2023-11-14T22:13:20.000Z");
  CHECK_FALSE(one["status"].contains("errorReason"));
  CHECK_FALSE(one["status"].contains("stale"));
  CHECK_FALSE(one["spec"].contains("credentialName"));  // only shown when the spec names one

  CheckError(f.client->Get("/api/v1/datasets/default/nope"), 404, "NotFound");
  CheckError(f.client->Get("/api/v1/datasets/default"), 404, "NotFound");
  CheckError(f.client->Get("/api/v1/models/default/m"), 404, "NotFound");
  CHECK(Body(f.client->Get("/api/v1/models"))["items"] == Json::array());
  CheckError(f.client->Get("/api/v2/status"), 404, "NotFound");

  httplib::Result wrong = f.client->Delete("/api/v1/status");
  CheckError(wrong, 405, "MethodNotAllowed");
  CHECK(wrong->get_header_value("Allow") == "GET, HEAD");
  CheckError(f.client->Put("/api/v1/datasets/default/ds1", "{}", "application/json"), 405,
             "MethodNotAllowed");
}

TEST_CASE("a handler that throws gets a JSON 500 and the server keeps serving", "[lc][server]") {
  Fixture f;
  f.view.throw_ = true;
  CheckError(f.client->Get("/api/v1/status"), 500, "InternalError");
  f.view.throw_ = false;
  httplib::Result status = f.client->Get("/api/v1/status");
  REQUIRE(status);
  CHECK(status->status == 200);
}

TEST_CASE("the metrics listener serves GET /metrics and nothing else", "[lc][server]") {
  FakeView view;
  RecordingSink sink;
  worker::WorkerIntake intake{worker::WorkerIntake::Options{&sink}};
  ServerOptions options;
  options.listen = "127.0.0.1:0";
  auto without = LcServer::Start(options, &view, &intake);
  REQUIRE(without.ok());
  CHECK((*without)->metrics_port() == 0);

  options.metrics_listen = "127.0.0.1:0";
  auto server = LcServer::Start(options, &view, &intake);
  REQUIRE(server.ok());
  REQUIRE((*server)->metrics_port() != 0);
  CHECK((*server)->metrics_port() != (*server)->port());
  httplib::Client metrics("127.0.0.1", (*server)->metrics_port());
  metrics.set_read_timeout(10, 0);
  httplib::Result page = metrics.Get("/metrics");
  REQUIRE(page);
  CHECK(page->status == 200);
  CHECK_THAT(page->get_header_value("Content-Type"), Catch::StartsWith("text/plain"));
  CHECK_THAT(page->body, Catch::Contains("nereid_lc_outbox_depth 3"));
  // Neither the operator API nor worker reports are reachable through it.
  for (const char* path : {"/api/v1/status", "/api/v1/datasets", "/healthz", "/readyz"}) {
    INFO(path);
    CheckError(metrics.Get(path), 404, "NotFound");
  }
  httplib::Result report = metrics.Post("/sedna/workers/w1/info", "{}", "application/json");
  REQUIRE(report);
  CHECK(report->status == 404);
  CHECK(sink.size() == 0);
  httplib::Result post = metrics.Post("/metrics", "x", "text/plain");
  REQUIRE(post);
  CHECK(post->status == 405);
  CHECK(post->get_header_value("Allow") == "GET");

  options.metrics_listen = "127.0.0.1";
  CHECK(LcServer::Start(options, &view, &intake).status().code() ==
        absl::StatusCode::kInvalidArgument);
}

TEST_CASE("start errors: bad listen address, address in use", "[lc][server]") {
  FakeView view;
  RecordingSink sink;
  worker::WorkerIntake intake{worker::WorkerIntake::Options{&sink}};
  ServerOptions options;
  options.listen = "127.0.0.1";
  CHECK(LcServer::Start(options, &view, &intake).status().code() ==
        absl::StatusCode::kInvalidArgument);

  options.listen = "127.0.0.1:0";
  auto first = LcServer::Start(options, &view, &intake);
  REQUIRE(first.ok());
  options.listen = "127.0.0.1:" + std::to_string((*first)->port());
  CHECK(LcServer::Start(options, &view, &intake).status().code() ==
        absl::StatusCode::kUnavailable);
  (*first)->Stop();
  (*first)->Stop();  // idempotent
}

}  // namespace
}  // namespace nereid::lc::server
