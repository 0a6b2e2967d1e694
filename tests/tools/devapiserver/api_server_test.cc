#include "tests/fakes/eventually.h"
#include "tools/devapiserver/api_server.h"

#include <arpa/inet.h>
#include <catch2/catch.hpp>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include <atomic>
#include <map>
#include <thread>
#include <vector>

#include "httplib.h"
#include "tests/tools/devapiserver/test_util.h"

namespace nereid::devapi {
namespace {

// A real server on a free loopback port, driven over HTTP.
class ServerFixture {
 public:
  explicit ServerFixture(size_t history = 1000, size_t threads = 16, bool debug_faults = false) {
    signal(SIGPIPE, SIG_IGN);
    StoreOptions so;
    so.history_size = history;
    store = std::make_unique<Store>(&registry, so);
    REQUIRE(store->Start().ok());
    ApiServerOptions o;
    o.threads = threads;
    o.heartbeat_interval = absl::Milliseconds(50);
    o.bookmark_interval = absl::Milliseconds(50);
    o.debug_faults = debug_faults;
    server = std::make_unique<ApiServer>(store.get(), o);
    auto port_or = server->Bind();
    REQUIRE(port_or.ok());
    port = *port_or;
    thread = std::thread([this] { (void)server->Run(); });
    REQUIRE(fakes::Eventually([&] { return server->running(); }));
  }
  ~ServerFixture() {
    server->Stop();
    thread.join();
  }
  httplib::Client Client() {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(10);
    return c;
  }

  Registry registry;
  std::unique_ptr<Store> store;
  std::unique_ptr<ApiServer> server;
  int port = 0;
  std::thread thread;
};

Json Body(const httplib::Result& r) { return Json::parse(r->body, nullptr, false); }

TEST_CASE("http: health, version, discovery") {
  ServerFixture s;
  auto c = s.Client();
  auto health = c.Get("/healthz");
  REQUIRE(health);
  CHECK(health->status == 200);
  auto version = c.Get("/version");
  REQUIRE(version);
  CHECK(Body(version)["major"] == "1");
  auto api = c.Get("/api");
  REQUIRE(api);
  CHECK(Body(api)["versions"][0] == "v1");
  auto v1 = c.Get("/api/v1");
  REQUIRE(v1);
  bool pods_status = false;
  Json v1_doc = Body(v1);
  for (const Json& r : v1_doc["resources"]) pods_status |= r["name"] == "pods/status";
  CHECK(pods_status);
  auto groups = c.Get("/apis");
  REQUIRE(groups);
  bool apps = false;
  Json groups_doc = Body(groups);
  for (const Json& g : groups_doc["groups"]) apps |= g["name"] == "apps";
  CHECK(apps);
  auto missing = c.Get("/apis/nope.io/v1");
  REQUIRE(missing);
  CHECK(missing->status == 404);
  CHECK(Body(missing)["kind"] == "Status");
  CHECK(Body(missing)["reason"] == "NotFound");
}

TEST_CASE("http: CRUD with Status errors, tables and methods") {
  ServerFixture s;
  auto c = s.Client();
  auto created = c.Post("/api/v1/namespaces/default/configmaps",
                        R"({"metadata":{"name":"a"},"data":{"k":"v"}})", "application/json");
  REQUIRE(created);
  CHECK(created->status == 201);
  CHECK(Body(created)["kind"] == "ConfigMap");
  auto dup = c.Post("/api/v1/namespaces/default/configmaps", R"({"metadata":{"name":"a"}})",
                    "application/json");
  REQUIRE(dup);
  CHECK(dup->status == 409);
  CHECK(Body(dup)["reason"] == "AlreadyExists");
  auto garbage = c.Post("/api/v1/namespaces/default/configmaps", "{not json", "application/json");
  REQUIRE(garbage);
  CHECK(garbage->status == 400);
  auto table = c.Get("/api/v1/namespaces/default/configmaps",
                     {{"Accept", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"}});
  REQUIRE(table);
  CHECK(Body(table)["kind"] == "Table");
  CHECK(Body(table)["rows"][0]["cells"][0] == "a");
  auto patched = c.Patch("/api/v1/namespaces/default/configmaps/a", R"({"data":{"k":"w"}})",
                         "application/merge-patch+json");
  REQUIRE(patched);
  CHECK(patched->status == 200);
  CHECK(Body(patched)["data"]["k"] == "w");
  auto ssa = c.Patch("/api/v1/namespaces/default/configmaps/a", "{}", "application/apply-patch+yaml");
  REQUIRE(ssa);
  CHECK(ssa->status == 415);
  auto wrong_method = c.Post("/api/v1/namespaces/default/configmaps/a", "{}", "application/json");
  REQUIRE(wrong_method);
  CHECK(wrong_method->status == 405);
  CHECK(Body(wrong_method)["reason"] == "MethodNotAllowed");
  auto del = c.Delete("/api/v1/namespaces/default/configmaps/a");
  REQUIRE(del);
  CHECK(del->status == 200);
  auto gone = c.Get("/api/v1/namespaces/default/configmaps/a");
  REQUIRE(gone);
  CHECK(gone->status == 404);
}

TEST_CASE("http: malformed input gets a 4xx Status and breaks nothing") {
  ServerFixture s;
  auto c = s.Client();
  REQUIRE(c.Post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                 testing::WidgetCrd().dump(), "application/json"));
  struct Case {
    const char* method;
    const char* path;
    const char* body;
    const char* content_type;
  };
  const Case cases[] = {
      {"POST", "/api/v1/namespaces/default/configmaps", R"({"metadata":{"name":5}})", "application/json"},
      {"POST", "/api/v1/namespaces/default/configmaps", R"({"metadata":{"labels":{"a":1}}})", "application/json"},
      {"POST", "/api/v1/namespaces/default/configmaps", R"({"metadata":"x"})", "application/json"},
      {"POST", "/api/v1/namespaces/default/configmaps", R"([1,2])", "application/json"},
      {"POST", "/api/v1/namespaces/default/configmaps", R"({"metadata":{"name":"a","finalizers":[1]}})", "application/json"},
      {"POST", "/api/v1/namespaces/default/configmaps",
       R"({"metadata":{"name":"a","ownerReferences":[{"uid":3}]}})", "application/json"},
      {"POST", "/api/v1/namespaces/default/configmaps", "\xff\xfe", "application/json"},
      {"POST", "/api/v1/namespaces/default/configmaps", "a: b", "application/yaml"},
      {"POST", "/api/v1/namespaces/default/configmaps", "k8s", "application/vnd.kubernetes.protobuf"},
      {"POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
       R"({"metadata":{"name":"x.y"},"spec":{"group":"y","scope":"Namespaced","names":{"plural":"x","kind":"X"},
           "versions":[{"name":"v1","served":"yes","storage":true}]}})", "application/json"},
      {"POST", "/apis/test.nereid.io/v1alpha1/namespaces/default/widgets",
       R"({"metadata":{"name":"w"},"spec":"not an object"})", "application/json"},
      {"POST", "/apis/test.nereid.io/v1alpha1/namespaces/default/widgets",
       R"({"metadata":{"name":"w"},"spec":{"format":["csv"],"replicas":"3","tags":"x"}})", "application/json"},
      {"POST", "/api/v1/namespaces/default/pods", R"({"metadata":{"name":"p"},"spec":"x"})", "application/json"},
      {"POST", "/api/v1/namespaces", R"({"metadata":{"name":"ns1"},"status":[1]})", "application/json"},
      {"GET", "/api/v1/namespaces/default/configmaps?labelSelector=a%20in%20(", "", ""},
      {"GET", "/api/v1/namespaces/default/configmaps?limit=-3", "", ""},
      {"GET", "/api/v1/namespaces/default/configmaps?continue=%%%", "", ""},
      {"GET", "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=x", "", ""},
      {"GET", "/api/v1/namespaces/default/configmaps/a/b/c/d", "", ""},
      {"DELETE", "/api/v1/namespaces/default/configmaps/nope", "", ""},
      {"DELETE", "/api/v1/namespaces/default/configmaps/nope", "{", "application/json"},
  };
  for (const Case& k : cases) {
    INFO(k.method << " " << k.path << " " << k.body);
    httplib::Result r = std::string(k.method) == "GET"      ? c.Get(k.path)
                        : std::string(k.method) == "DELETE" ? c.Delete(k.path, k.body, k.content_type)
                                                            : c.Post(k.path, k.body, k.content_type);
    REQUIRE(r);
    CHECK(r->status >= 400);
    CHECK(r->status < 500);
    CHECK(Body(r)["kind"] == "Status");
  }
  // Patches that cannot apply.
  REQUIRE(c.Post("/api/v1/namespaces/default/configmaps", R"({"metadata":{"name":"ok"}})", "application/json"));
  const std::pair<const char*, const char*> patches[] = {
      {R"({"metadata":{"name":7}})", "application/merge-patch+json"},
      {R"({"spec":{"containers":[{"image":"x"}]}})", "application/strategic-merge-patch+json"},
      {R"({"$patch":7})", "application/strategic-merge-patch+json"},
      {R"([{"op":"move","from":"/nope","path":"/x"}])", "application/json-patch+json"},
      {R"({"a":1})", "application/json-patch+json"},
      {"{}", "text/plain"},
      {R"({"spec":"x"})", "application/merge-patch+json"},
  };
  for (const auto& [body, type] : patches) {
    INFO(body << " " << type);
    auto r = c.Patch("/api/v1/namespaces/default/configmaps/ok", body, type);
    REQUIRE(r);
    CHECK(r->status >= 400);
    CHECK(r->status < 500);
  }
  // null metadata fields read as absent.
  auto nulls = c.Post("/api/v1/namespaces/default/configmaps",
                      R"({"metadata":{"name":"n","labels":null,"namespace":null}})", "application/json");
  REQUIRE(nulls);
  CHECK(nulls->status == 201);
  // The object is intact and the server still serves.
  auto ok = c.Get("/api/v1/namespaces/default/configmaps/ok");
  REQUIRE(ok);
  CHECK(ok->status == 200);
  CHECK(Body(ok)["metadata"]["name"] == "ok");
  auto list = c.Get("/api/v1/namespaces/default/configmaps",
                    {{"Accept", "application/json;as=Table;v=v1;g=meta.k8s.io"}});
  REQUIRE(list);
  CHECK(list->status == 200);
}

TEST_CASE("http: watch streams one event per line and notices a vanished client") {
  ServerFixture s;
  std::atomic<bool> got_event{false};
  std::string received;
  std::thread watcher([&] {
    auto c = s.Client();
    c.Get("/api/v1/namespaces/default/configmaps?watch=true&allowWatchBookmarks=true&timeoutSeconds=10",
          [&](const char* data, size_t len) {
            received.append(data, len);
            if (received.find("\"ADDED\"") != std::string::npos) {
              got_event = true;
              return false;  // hang up
            }
            return true;
          });
  });
  REQUIRE(fakes::Eventually([&] { return s.store->WatcherCount() != 0; }));
  REQUIRE(s.store->WatcherCount() == 1);
  auto c = s.Client();
  REQUIRE(c.Post("/api/v1/namespaces/default/configmaps", R"({"metadata":{"name":"w"}})", "application/json"));
  watcher.join();
  CHECK(got_event);
  // Lines are newline-terminated JSON events (bookmarks may come first).
  CHECK(received.find("{\"object\":") != std::string::npos);
  CHECK(received.back() == '\n');
  // The server notices the hang-up on its next write (bookmark/heartbeat) and drops the watcher.
  // WatcherCount counts registered watchers; closed ones are pruned on the next publish.
  CHECK(fakes::Eventually(
      [&] {
        if (s.store->WatcherCount() == 0) return true;
        (void)c.Post("/api/v1/namespaces/default/configmaps",
                     R"({"metadata":{"generateName":"tick-"}})", "application/json");
        return false;
      },
      absl::Seconds(10), absl::Milliseconds(20)));
}

TEST_CASE("http: dozens of open watches do not starve normal requests") {
  ServerFixture s(1000, /*threads=*/64);
  constexpr int kWatches = 40;
  std::atomic<bool> stop{false};
  std::vector<std::thread> watchers;
  for (int i = 0; i < kWatches; ++i) {
    watchers.emplace_back([&] {
      auto c = s.Client();
      c.Get("/api/v1/configmaps?watch=true&timeoutSeconds=30",
            [&](const char*, size_t) { return !stop.load(); });
    });
  }
  fakes::Eventually([&] { return s.store->WatcherCount() >= kWatches; }, absl::Seconds(20));
  CHECK(s.store->WatcherCount() == kWatches);
  auto c = s.Client();
  absl::Time start = absl::Now();
  auto r = c.Get("/api/v1/namespaces");
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(absl::Now() - start < absl::Seconds(2));
  stop = true;  // each watcher hangs up on its next heartbeat
  for (std::thread& t : watchers) t.join();
}

TEST_CASE("http: a burst of connections waits in the backlog, none is dropped") {
  // Bound but not accepting yet: every handshake the kernel completes waits in the listen
  // backlog. cpp-httplib's own backlog of 5 would drop the SYNs past it, and their clients would
  // resend only after a second.
  Registry registry;
  Store store(&registry, StoreOptions{});
  REQUIRE(store.Start().ok());
  ApiServer server(&store, ApiServerOptions{});
  absl::StatusOr<int> port = server.Bind();
  REQUIRE(port.ok());
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(*port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  constexpr int kConnections = 32;
  std::vector<pollfd> sockets;
  for (int i = 0; i < kConnections; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    REQUIRE(fd >= 0);
    sockets.push_back({fd, POLLOUT, 0});
    const int rc = connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address));
    REQUIRE((rc == 0 || errno == EINPROGRESS));
  }
  std::vector<pollfd> pending = sockets;  // not connected yet
  const absl::Time deadline = absl::Now() + absl::Milliseconds(500);  // well below the 1 s resend
  while (!pending.empty() && absl::Now() < deadline) {
    if (poll(pending.data(), pending.size(), 50) < 0) break;
    std::erase_if(pending, [](const pollfd& p) { return (p.revents & POLLOUT) != 0; });
  }
  INFO(pending.size() << " of " << kConnections << " connections not accepted by the kernel");
  CHECK(pending.empty());
  for (const pollfd& p : sockets) close(p.fd);
  server.Stop();
}

TEST_CASE("http: watch from a too-old version is 410") {
  ServerFixture s(/*history=*/2);
  auto c = s.Client();
  for (const char* body : {R"({"metadata":{"name":"a"}})", R"({"metadata":{"name":"b"}})",
                           R"({"metadata":{"name":"c"}})"}) {
    REQUIRE(c.Post("/api/v1/namespaces/default/configmaps", body, "application/json"));
  }
  auto r = c.Get("/api/v1/configmaps?watch=1&resourceVersion=1");
  REQUIRE(r);
  CHECK(r->status == 410);
  CHECK(Body(r)["reason"] == "Expired");
}

TEST_CASE("http: /debug/requests counts requests by verb, resource and user agent; DELETE resets") {
  ServerFixture s;
  auto c = s.Client();
  httplib::Headers bench = {{"User-Agent", "bench"}};
  httplib::Headers gm = {{"User-Agent", "gm"}};
  REQUIRE(c.Post("/api/v1/namespaces/default/configmaps", bench,
                 testing::ConfigMap("a").dump(), "application/json")->status == 201);
  REQUIRE(c.Get("/api/v1/namespaces/default/configmaps/a", gm)->status == 200);
  REQUIRE(c.Get("/api/v1/namespaces/default/configmaps/a", gm)->status == 200);
  REQUIRE(c.Get("/api/v1/namespaces/default/configmaps", gm)->status == 200);
  REQUIRE(c.Get("/api/v1/namespaces/default/configmaps/missing", gm)->status == 404);  // counted
  REQUIRE(c.Get("/version", gm)->status == 200);

  auto counts = c.Get("/debug/requests");
  REQUIRE(counts);
  REQUIRE(counts->status == 200);
  Json body = Body(counts);
  CHECK(body["total"] == 6);  // the GET of /debug/requests is not counted
  std::map<std::string, int64_t> by_key;
  for (const Json& row : body["requests"]) {
    by_key[row["userAgent"].get<std::string>() + " " + row["verb"].get<std::string>() + " " +
           row["resource"].get<std::string>()] = row["count"].get<int64_t>();
  }
  CHECK(by_key == std::map<std::string, int64_t>{{"bench create configmaps", 1},
                                                 {"gm get configmaps", 3},
                                                 {"gm list configmaps", 1},
                                                 {"gm get /version", 1}});

  auto reset = c.Delete("/debug/requests");
  REQUIRE(reset);
  CHECK(reset->status == 200);
  CHECK(Body(reset)["total"] == 0);
  CHECK(Body(c.Get("/debug/requests"))["requests"].empty());
  CHECK(c.Post("/debug/requests", "", "application/json")->status == 405);
}

TEST_CASE("http: /debug/faults is not served unless enabled") {
  ServerFixture s;
  auto c = s.Client();
  auto r = c.Post("/debug/faults", R"({"code": 500})", "application/json");
  REQUIRE(r);
  CHECK(r->status == 404);
  CHECK(c.Get("/api/v1/namespaces/default/configmaps")->status == 200);
}

TEST_CASE("http: /debug/faults fails one client's requests with Retry-After, then clears") {
  ServerFixture s(1000, 16, /*debug_faults=*/true);
  auto c = s.Client();
  httplib::Headers gm = {{"User-Agent", "nereid-globalmanager"}};
  httplib::Headers other = {{"User-Agent", "kubectl/v1.32"}};
  const char* list = "/api/v1/namespaces/default/configmaps";
  CHECK(c.Post("/debug/faults", R"({"code": 600})", "application/json")->status == 400);
  auto set = c.Post("/debug/faults",
                    R"({"code": 429, "retryAfterSeconds": 2, "count": 2, "userAgent": "globalmanager"})",
                    "application/json");
  REQUIRE(set);
  REQUIRE(set->status == 200);
  CHECK(Body(set)["active"] == true);

  auto first = c.Get(list, gm);
  REQUIRE(first);
  CHECK(first->status == 429);
  CHECK(first->get_header_value("Retry-After") == "2");
  CHECK(Body(first)["reason"] == "TooManyRequests");
  CHECK(c.Get(list, other)->status == 200);  // another client is not affected
  CHECK(c.Get(list, gm)->status == 429);
  CHECK(c.Get(list, gm)->status == 200);     // the count is used up
  Json state = Body(c.Get("/debug/faults"));
  CHECK(state["active"] == false);
  CHECK(state["injected"] == 2);
  CHECK(Body(c.Get("/debug/requests"))["total"] == 4);  // failed requests are counted too

  REQUIRE(c.Post("/debug/faults", R"({"code": 500})", "application/json")->status == 200);
  CHECK(c.Get(list, other)->status == 500);
  REQUIRE(c.Delete("/debug/faults")->status == 200);
  CHECK(c.Get(list, other)->status == 200);
}

TEST_CASE("http: /debug/faults expireWatches ends open watches with 410 and old versions are gone") {
  ServerFixture s(1000, 16, /*debug_faults=*/true);
  auto c = s.Client();
  auto created = c.Post("/api/v1/namespaces/default/configmaps", testing::ConfigMap("a").dump(),
                        "application/json");
  REQUIRE(created);
  const std::string rv = Body(created)["metadata"]["resourceVersion"];
  std::string stream;
  std::thread watcher([&] {
    auto w = s.Client();
    w.Get(("/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=" + rv).c_str(),
          [&](const char* data, size_t n) {
            stream.append(data, n);
            return true;
          });
  });
  REQUIRE(fakes::Eventually([&] { return s.store->WatcherCount() == 1; }));
  REQUIRE(c.Post("/debug/faults", R"({"expireWatches": true})", "application/json")->status ==
          200);
  watcher.join();  // the stream ended
  Json last = Json::parse(stream.substr(stream.find('{')), nullptr, false);
  REQUIRE(last.is_object());
  CHECK(last["type"] == "ERROR");
  CHECK(last["object"]["code"] == 410);
  CHECK(last["object"]["reason"] == "Expired");
  auto resume = c.Get(("/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=" + rv).c_str());
  REQUIRE(resume);
  CHECK(resume->status == 410);
}

}  // namespace
}  // namespace nereid::devapi
