#include <catch2/catch.hpp>

#include <chrono>
#include <deque>
#include <future>
#include <memory>
#include <optional>

#include "absl/synchronization/mutex.h"
#include "common/kube/errors.h"
#include "common/kube/http_watch_stream.h"
#include "common/kube/json_stream.h"
#include "common/kube/rest_client.h"
#include "common/time/fake_clock.h"
#include "tests/common/kube/test_http_server.h"

namespace nereid::kube {
namespace {

using testing::TestHttpServer;

// What the test server streams: chunks pushed by the test, then the end of the response.
class ChunkScript {
 public:
  enum class Step { kChunk, kIdle, kClosed };

  void Push(std::string chunk) {
    absl::MutexLock lock(&mu_);
    chunks_.push_back(std::move(chunk));
  }
  void Close() {
    absl::MutexLock lock(&mu_);
    closed_ = true;
  }
  // Called from the server's content provider: waits briefly for the next step.
  Step Next(std::string* chunk) {
    absl::MutexLock lock(&mu_);
    auto ready = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return closed_ || !chunks_.empty(); };
    mu_.AwaitWithTimeout(absl::Condition(&ready), absl::Milliseconds(20));
    if (!chunks_.empty()) {
      *chunk = std::move(chunks_.front());
      chunks_.pop_front();
      return Step::kChunk;
    }
    return closed_ ? Step::kClosed : Step::kIdle;
  }

 private:
  absl::Mutex mu_;
  std::deque<std::string> chunks_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

Json StatusBody(int code, const std::string& reason, const std::string& message) {
  return {{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Failure"},
          {"reason", reason}, {"message", message},  {"code", code}};
}

struct WatchFixture {
  explicit WatchFixture(RestClient::Options options = {}) {
    server.server().Get(".*", [script = script](const httplib::Request& req,
                                                httplib::Response& res) {
      if (req.get_param_value("resourceVersion") == "too-old") {
        res.status = 410;
        res.set_content(StatusBody(410, "Expired", "too old resource version: 1 (500)").dump(),
                        "application/json");
        return;
      }
      res.set_chunked_content_provider(
          "application/json", [script](size_t, httplib::DataSink& sink) {
            std::string chunk;
            switch (script->Next(&chunk)) {
              case ChunkScript::Step::kChunk:
                return sink.write(chunk.data(), chunk.size());
              case ChunkScript::Step::kIdle:
                return true;
              case ChunkScript::Step::kClosed:
                sink.done();
                return true;
            }
            return false;
          });
    });
    server.Start();
    KubeConfig config;
    config.server = server.url();
    options.clock = &clock;
    auto created = RestClient::Create(config, options);
    REQUIRE(created.ok());
    client = *std::move(created);
  }
  ~WatchFixture() { script->Close(); }

  std::unique_ptr<WatchStream> Watch(ListOptions options = {}) {
    auto stream = client->Watch(resources::Pods(), "ns1", options);
    REQUIRE(stream.ok());
    return *std::move(stream);
  }

  FakeClock clock;
  std::shared_ptr<ChunkScript> script = std::make_shared<ChunkScript>();
  TestHttpServer server;
  std::unique_ptr<RestClient> client;
};

std::string Event(const std::string& type, const std::string& name, const std::string& rv) {
  Json object = {{"metadata", {{"name", name}, {"namespace", "ns1"}, {"resourceVersion", rv}}}};
  return Json({{"type", type}, {"object", object}}).dump() + "\n";
}

TEST_CASE("watch documents decode to events or DataLoss", "[watch]") {
  const Resource pods{.version = "v1", .resource = "pods", .kind = "Pod"};
  absl::StatusOr<WatchEvent> added = DecodeWatchEvent(Event("ADDED", "p1", "3"), pods);
  REQUIRE(added.ok());
  CHECK(added->type == WatchEvent::Type::kAdded);
  CHECK(added->object["apiVersion"] == "v1");  // filled in from the resource
  CHECK(added->object["kind"] == "Pod");
  absl::StatusOr<WatchEvent> error =
      DecodeWatchEvent(R"({"type":"ERROR","object":{"kind":"Status","code":410}})", pods);
  REQUIRE(error.ok());
  CHECK(error->object["kind"] == "Status");
  CHECK_FALSE(error->object.contains("apiVersion"));
  for (const char* bad : {"{", R"({"type":"ADDED"})", R"({"type":"NEW","object":{}})",
                          R"({"type":"ADDED","object":[]})", "[]"}) {
    INFO(bad);
    CHECK(absl::IsDataLoss(DecodeWatchEvent(bad, pods).status()));
  }
}

TEST_CASE("watch sends its parameters and decodes events split across chunks", "[watch]") {
  WatchFixture f;
  const std::string added = Event("ADDED", "p1", "11");
  const std::string modified = Event("MODIFIED", "p1", "12");
  const std::string deleted = Event("DELETED", "p1", "13");
  f.script->Push(added.substr(0, 5));
  f.script->Push(added.substr(5, 20));
  f.script->Push(added.substr(25));
  f.script->Push(modified + deleted);  // Two events in one chunk.
  f.script->Push(Event("BOOKMARK", "", "14"));
  f.script->Close();

  ListOptions options;
  options.resource_version = "10";
  options.allow_watch_bookmarks = true;
  options.timeout_seconds = 300;
  options.label_selector = "app in (a,b)";
  options.field_selector = "spec.nodeName=n1";
  std::unique_ptr<WatchStream> stream = f.Watch(options);
  testing::RecordedRequest req = f.server.last();
  CHECK(req.path == "/api/v1/namespaces/ns1/pods");
  CHECK(req.Param("watch") == "true");
  CHECK(req.Param("resourceVersion") == "10");
  CHECK(req.Param("allowWatchBookmarks") == "true");
  CHECK(req.Param("timeoutSeconds") == "300");
  CHECK(req.Param("labelSelector") == "app in (a,b)");
  CHECK(req.Param("fieldSelector") == "spec.nodeName=n1");

  WatchEvent event;
  REQUIRE(stream->Next(&event));
  CHECK(event.type == WatchEvent::Type::kAdded);
  CHECK(ResourceVersion(event.object) == "11");
  CHECK(event.object["kind"] == "Pod");  // Filled in when the server omits it.
  REQUIRE(stream->Next(&event));
  CHECK(event.type == WatchEvent::Type::kModified);
  REQUIRE(stream->Next(&event));
  CHECK(event.type == WatchEvent::Type::kDeleted);
  CHECK(ResourceVersion(event.object) == "13");
  REQUIRE(stream->Next(&event));
  CHECK(event.type == WatchEvent::Type::kBookmark);
  CHECK(ResourceVersion(event.object) == "14");
  CHECK_FALSE(stream->Next(&event));
  CHECK(stream->Finish().ok());  // The server closed normally.
}

TEST_CASE("watch: 410 at start is IsGone; an ERROR event carries the Status", "[watch]") {
  WatchFixture f;
  ListOptions options;
  options.resource_version = "too-old";
  auto gone = f.client->Watch(resources::Pods(), "ns1", options);
  REQUIRE_FALSE(gone.ok());
  CHECK(IsGone(gone.status()));
  CHECK(gone.status().message().find("too old resource version") != std::string::npos);

  f.script->Push(Json({{"type", "ERROR"},
                       {"object", StatusBody(410, "Expired", "too old resource version")}})
                     .dump() +
                 "\n");
  f.script->Close();
  std::unique_ptr<WatchStream> stream = f.Watch();
  WatchEvent event;
  REQUIRE(stream->Next(&event));
  CHECK(event.type == WatchEvent::Type::kError);
  CHECK(event.object["code"] == 410);
  CHECK(event.object["kind"] == "Status");
  CHECK(IsGone(StatusFromResponse(410, event.object.dump())));
  CHECK_FALSE(stream->Next(&event));
}

TEST_CASE("watch: Cancel from another thread unblocks Next promptly", "[watch]") {
  WatchFixture f;
  f.script->Push(Event("ADDED", "p1", "1"));
  std::unique_ptr<WatchStream> stream = f.Watch();  // No timeoutSeconds: the server stays open.
  WatchEvent event;
  REQUIRE(stream->Next(&event));
  auto blocked = std::async(std::launch::async, [&] {
    WatchEvent next;
    return stream->Next(&next);
  });
  CHECK(blocked.wait_for(std::chrono::milliseconds(100)) == std::future_status::timeout);
  const auto start = std::chrono::steady_clock::now();
  stream->Cancel();
  REQUIRE(blocked.wait_for(std::chrono::seconds(5)) == std::future_status::ready);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
  CHECK_FALSE(blocked.get());
  CHECK(stream->Finish().ok());
  CHECK_FALSE(stream->Next(&event));
  stream->Cancel();  // Idempotent.
}

TEST_CASE("watch: destroying an open stream does not hang", "[watch]") {
  WatchFixture f;
  const auto start = std::chrono::steady_clock::now();
  {
    std::unique_ptr<WatchStream> stream = f.Watch();
  }
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
}

TEST_CASE("watch: a server that never sends headers is given up on after the timeout", "[watch]") {
  TestHttpServer server;
  absl::Mutex mu;
  bool release = false;
  server.server().Get(".*", [&](const httplib::Request&, httplib::Response& res) {
    absl::MutexLock lock(&mu);
    mu.AwaitWithTimeout(absl::Condition(&release), absl::Seconds(10));
    res.set_content("{}", "application/json");
  });
  server.Start();
  KubeConfig config;
  config.server = server.url();
  RestClient::Options options;
  options.timeout = absl::Milliseconds(300);
  auto client = RestClient::Create(config, options);
  REQUIRE(client.ok());
  const auto start = std::chrono::steady_clock::now();
  auto stream = (*client)->Watch(resources::Pods(), "ns1", {});
  const auto elapsed = std::chrono::steady_clock::now() - start;
  {
    absl::MutexLock lock(&mu);
    release = true;
  }
  REQUIRE_FALSE(stream.ok());
  CHECK(stream.status().code() == absl::StatusCode::kDeadlineExceeded);
  CHECK(elapsed >= std::chrono::milliseconds(250));
  CHECK(elapsed < std::chrono::seconds(3));
}

TEST_CASE("watch: malformed streams end with a clear error", "[watch]") {
  SECTION("garbage after a good event") {
    WatchFixture f;
    f.script->Push(Event("ADDED", "p1", "1") + "not json\n");
    f.script->Close();
    std::unique_ptr<WatchStream> stream = f.Watch();
    WatchEvent event;
    REQUIRE(stream->Next(&event));
    CHECK_FALSE(stream->Next(&event));
    CHECK(stream->Finish().code() == absl::StatusCode::kDataLoss);
  }
  SECTION("unknown event type") {
    WatchFixture f;
    f.script->Push(Event("EXPLODED", "p1", "1"));
    f.script->Close();
    std::unique_ptr<WatchStream> stream = f.Watch();
    WatchEvent event;
    CHECK_FALSE(stream->Next(&event));
    CHECK(stream->Finish().code() == absl::StatusCode::kDataLoss);
  }
  SECTION("stream cut in the middle of an event") {
    WatchFixture f;
    f.script->Push("{\"type\":\"ADDED\",\"object\":{\"metadata\":");
    f.script->Close();
    std::unique_ptr<WatchStream> stream = f.Watch();
    WatchEvent event;
    CHECK_FALSE(stream->Next(&event));
    absl::Status status = stream->Finish();
    CHECK(status.code() == absl::StatusCode::kDataLoss);
    CHECK(status.message().find("middle of an event") != std::string::npos);
  }
  SECTION("event larger than the bound") {
    RestClient::Options options;
    options.max_watch_event_bytes = 1024;
    WatchFixture f(options);
    Json big = {{"type", "ADDED"},
                {"object", {{"metadata", {{"name", "p"}}}, {"data", std::string(4096, 'x')}}}};
    const std::string text = big.dump();
    f.script->Push(text.substr(0, 700));
    f.script->Push(text.substr(700));
    f.script->Push(Event("ADDED", "p2", "2"));
    std::unique_ptr<WatchStream> stream = f.Watch();
    WatchEvent event;
    CHECK_FALSE(stream->Next(&event));
    absl::Status status = stream->Finish();
    CHECK(status.code() == absl::StatusCode::kResourceExhausted);
    CHECK(status.message().find("1024") != std::string::npos);
  }
}

TEST_CASE("JSON stream framer: any chunking gives the same documents", "[watch]") {
  const std::string stream =
      "{\"type\":\"ADDED\",\"object\":{\"a\":\"}{\\\"\",\"b\":[1,{\"c\":2}]}}\n"
      "  {\"type\":\"DELETED\",\"object\":{\"s\":\"\\\\\"}}\r\n{\"x\":{}}";
  const std::vector<std::string> expected = {
      "{\"type\":\"ADDED\",\"object\":{\"a\":\"}{\\\"\",\"b\":[1,{\"c\":2}]}}",
      "{\"type\":\"DELETED\",\"object\":{\"s\":\"\\\\\"}}", "{\"x\":{}}"};
  for (size_t split1 = 0; split1 <= stream.size(); ++split1) {
    for (size_t split2 = split1; split2 <= stream.size(); split2 += 7) {
      JsonStreamFramer framer(1 << 20);
      std::vector<std::string> docs;
      REQUIRE(framer.Feed(std::string_view(stream).substr(0, split1), &docs).ok());
      REQUIRE(framer.Feed(std::string_view(stream).substr(split1, split2 - split1), &docs).ok());
      REQUIRE(framer.Feed(std::string_view(stream).substr(split2), &docs).ok());
      REQUIRE(docs == expected);
      CHECK_FALSE(framer.has_partial());
    }
  }
  for (const std::string& doc : expected) CHECK_FALSE(Json::parse(doc, nullptr, false).is_discarded());
}

TEST_CASE("JSON stream framer: errors stick and limits hold", "[watch]") {
  std::vector<std::string> docs;
  JsonStreamFramer framer(16);
  CHECK(framer.Feed("{\"a\":1}", &docs).ok());
  CHECK(framer.Feed("{\"a\":\"", &docs).ok());
  CHECK(framer.has_partial());
  CHECK(framer.Feed("0123456789\"}", &docs).code() == absl::StatusCode::kResourceExhausted);
  CHECK(framer.Feed("{}", &docs).code() == absl::StatusCode::kResourceExhausted);
  CHECK(docs.size() == 1);

  JsonStreamFramer garbage(1024);
  CHECK(garbage.Feed("[1]", &docs).code() == absl::StatusCode::kDataLoss);
  JsonStreamFramer unbounded_partial(8);
  CHECK(unbounded_partial.Feed("{\"aaaaaaaaaaaaaaa", &docs).code() ==
        absl::StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace nereid::kube
