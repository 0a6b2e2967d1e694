#include "common/kube/rest_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <deque>
#include <future>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "common/kube/errors.h"
#include "common/time/fake_clock.h"
#include "tests/common/kube/test_certs.h"
#include "tests/common/kube/test_http_server.h"
#include "tests/fakes/eventually.h"

namespace nereid::kube {
namespace {

using testing::TestHttpServer;

using fakes::Eventually;

void Reply(httplib::Response& res, int code, const Json& body) {
  res.status = code;
  res.set_content(body.dump(), "application/json");
}

Json StatusBody(int code, const std::string& reason, const std::string& message) {
  return {{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Failure"},
          {"reason", reason}, {"message", message},  {"code", code}};
}

Json Pod(const std::string& ns, const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"namespace", ns}, {"name", name}, {"resourceVersion", "7"}}}};
}

Resource Datasets() { return {"sedna.io", "v1alpha1", "datasets", "Dataset", true}; }

struct Fixture {
  explicit Fixture(RestClient::Options options = {}, std::string token = "tok-1") {
    server.Start();
    KubeConfig config;
    config.server = server.url();
    config.bearer_token = std::move(token);
    if (options.clock == Clock::Real()) options.clock = &clock;
    absl::StatusOr<std::unique_ptr<RestClient>> created = RestClient::Create(config, options);
    REQUIRE(created.ok());
    client = *std::move(created);
  }
  FakeClock clock;
  TestHttpServer server;
  std::unique_ptr<RestClient> client;
};

TEST_CASE("Get builds resource paths and sends auth, accept and user-agent", "[rest]") {
  Fixture f;
  f.server.server().Get(".*", [](const httplib::Request& req, httplib::Response& res) {
    Json obj = {{"metadata", {{"name", "x"}}}};  // No apiVersion/kind, like list items.
    Reply(res, 200, obj);
  });
  absl::StatusOr<Json> pod = f.client->Get(resources::Pods(), "ns1", "p1");
  REQUIRE(pod.ok());
  CHECK((*pod)["apiVersion"] == "v1");
  CHECK((*pod)["kind"] == "Pod");
  testing::RecordedRequest req = f.server.last();
  CHECK(req.method == "GET");
  CHECK(req.path == "/api/v1/namespaces/ns1/pods/p1");
  CHECK(req.Header("Authorization") == "Bearer tok-1");
  CHECK(req.Header("Accept") == "application/json");
  CHECK(req.Header("User-Agent").rfind("nereid/", 0) == 0);

  REQUIRE(f.client->Get(resources::Nodes(), "ignored", "n1").ok());
  CHECK(f.server.last().path == "/api/v1/nodes/n1");
  REQUIRE(f.client->Get(Datasets(), "default", "ds1").ok());
  CHECK(f.server.last().path == "/apis/sedna.io/v1alpha1/namespaces/default/datasets/ds1");
  CHECK(f.client->Get(resources::Pods(), "ns1", "").status().code() ==
        absl::StatusCode::kInvalidArgument);
}

TEST_CASE("List encodes selectors and paging; ListAll follows continue tokens", "[rest]") {
  Fixture f;
  f.server.server().Get(".*", [](const httplib::Request& req, httplib::Response& res) {
    const std::string cont = req.get_param_value("continue");
    Json list = {{"kind", "PodList"}, {"apiVersion", "v1"}, {"items", Json::array()}};
    if (cont.empty()) {
      list["items"].push_back({{"metadata", {{"name", "a"}}}});
      list["metadata"] = {{"resourceVersion", "100"}, {"continue", "tok/+=&"}};
    } else {
      list["items"].push_back({{"metadata", {{"name", "b"}}}});
      list["metadata"] = {{"resourceVersion", "101"}};
    }
    Reply(res, 200, list);
  });
  ListOptions options;
  options.label_selector = "app=x,tier!=db,env in (a,b),!legacy";
  options.field_selector = "spec.nodeName=n1";
  options.limit = 1;
  options.resource_version = "0";
  absl::StatusOr<ObjectList> page = f.client->List(resources::Pods(), "ns1", options);
  REQUIRE(page.ok());
  REQUIRE(page->items.size() == 1);
  CHECK(page->items[0]["kind"] == "Pod");
  CHECK(page->resource_version == "100");
  CHECK(page->continue_token == "tok/+=&");
  testing::RecordedRequest req = f.server.last();
  CHECK(req.path == "/api/v1/namespaces/ns1/pods");
  CHECK(req.Param("labelSelector") == "app=x,tier!=db,env in (a,b),!legacy");
  CHECK(req.Param("fieldSelector") == "spec.nodeName=n1");
  CHECK(req.Param("limit") == "1");
  CHECK(req.Param("resourceVersion") == "0");
  // Encoded on the wire: no raw spaces, commas, '!' or '=' inside values.
  CHECK(req.target.find("labelSelector=app%3Dx%2Ctier%21%3Ddb%2Cenv%20in%20%28a%2Cb%29%2C%21legacy") !=
        std::string::npos);

  options.resource_version.clear();
  absl::StatusOr<ObjectList> all = ListAll(*f.client, resources::Pods(), "", options);
  REQUIRE(all.ok());
  REQUIRE(all->items.size() == 2);
  CHECK(all->items[1]["metadata"]["name"] == "b");
  CHECK(all->resource_version == "101");
  CHECK(f.server.last().path == "/api/v1/pods");
  CHECK(f.server.last().Param("continue") == "tok/+=&");
  CHECK(f.server.last().target.find("continue=tok%2F%2B%3D%26") != std::string::npos);
}

TEST_CASE("Create, Update, UpdateStatus send JSON to the right paths", "[rest]") {
  Fixture f;
  auto echo = [](const httplib::Request& req, httplib::Response& res) {
    Json body = Json::parse(req.body, nullptr, false);
    body["metadata"]["resourceVersion"] = "8";
    Reply(res, req.method == "POST" ? 201 : 200, body);
  };
  f.server.server().Post(".*", echo);
  f.server.server().Put(".*", echo);

  absl::StatusOr<Json> created = f.client->Create(resources::Pods(), "", Pod("ns1", "p1"));
  REQUIRE(created.ok());
  CHECK(ResourceVersion(*created) == "8");
  testing::RecordedRequest req = f.server.last();
  CHECK(req.method == "POST");
  CHECK(req.path == "/api/v1/namespaces/ns1/pods");
  CHECK(req.Header("Content-Type") == "application/json");
  CHECK(Json::parse(req.body)["metadata"]["name"] == "p1");

  REQUIRE(f.client->Create(resources::Nodes(), "", {{"metadata", {{"name", "n1"}}}}).ok());
  CHECK(f.server.last().path == "/api/v1/nodes");
  CHECK(Json::parse(f.server.last().body)["kind"] == "Node");  // TypeMeta filled in.

  REQUIRE(f.client->Update(resources::Pods(), Pod("ns1", "p1")).ok());
  CHECK(f.server.last().method == "PUT");
  CHECK(f.server.last().path == "/api/v1/namespaces/ns1/pods/p1");
  REQUIRE(f.client->UpdateStatus(Datasets(), Pod("ns2", "d1")).ok());
  CHECK(f.server.last().path == "/apis/sedna.io/v1alpha1/namespaces/ns2/datasets/d1/status");

  const size_t before = f.server.request_count();
  CHECK(f.client->Create(resources::Pods(), "other", Pod("ns1", "p1")).status().code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(f.client->Create(resources::Pods(), "", {{"metadata", {{"name", "x"}}}}).status().code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(f.client->Update(resources::Pods(), {{"metadata", {{"name", "x"}}}}).status().code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(f.server.request_count() == before);  // Refused locally.
}

TEST_CASE("Patch uses the content type of its patch type, incl. subresources", "[rest]") {
  Fixture f;
  f.server.server().Patch(".*", [](const httplib::Request& req, httplib::Response& res) {
    Reply(res, 200, Pod("ns1", "p1"));
  });
  REQUIRE(f.client->Patch(resources::Pods(), "ns1", "p1", PatchType::kMerge,
                          {{"metadata", {{"labels", {{"a", "b"}}}}}})
              .ok());
  CHECK(f.server.last().method == "PATCH");
  CHECK(f.server.last().Header("Content-Type") == "application/merge-patch+json");
  CHECK(Json::parse(f.server.last().body)["metadata"]["labels"]["a"] == "b");

  Json ops = Json::array({{{"op", "replace"}, {"path", "/status/phase"}, {"value", "Running"}}});
  REQUIRE(f.client->Patch(Datasets(), "ns1", "d1", PatchType::kJson, ops, "status").ok());
  CHECK(f.server.last().Header("Content-Type") == "application/json-patch+json");
  CHECK(f.server.last().path == "/apis/sedna.io/v1alpha1/namespaces/ns1/datasets/d1/status");
  CHECK(Json::parse(f.server.last().body).is_array());

  REQUIRE(f.client->Patch(resources::Deployments(), "ns1", "d", PatchType::kStrategicMerge,
                          {{"spec", {{"replicas", 2}}}}, "scale")
              .ok());
  CHECK(f.server.last().Header("Content-Type") == "application/strategic-merge-patch+json");
  CHECK(f.server.last().path == "/apis/apps/v1/namespaces/ns1/deployments/d/scale");

  CHECK(f.client->Patch(resources::Pods(), "ns1", "p1", PatchType::kJson, Json::object())
            .status()
            .code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("Delete sends DeleteOptions with propagation, preconditions, grace period", "[rest]") {
  Fixture f;
  f.server.server().Delete(".*", [](const httplib::Request& req, httplib::Response& res) {
    if (req.path.ends_with("/gone")) {
      Reply(res, 404, StatusBody(404, "NotFound", "pods \"gone\" not found"));
      return;
    }
    if (req.path.ends_with("/silent")) {  // 200 without a body: still a success.
      res.status = 200;
      return;
    }
    Reply(res, 200, StatusBody(200, "", ""));
  });
  DeleteOptions options;
  options.propagation_policy = "Foreground";
  options.precondition_uid = "uid-1";
  options.precondition_resource_version = "42";
  options.grace_period_seconds = 0;
  REQUIRE(f.client->Delete(resources::Pods(), "ns1", "p1", options).ok());
  testing::RecordedRequest req = f.server.last();
  CHECK(req.method == "DELETE");
  CHECK(req.path == "/api/v1/namespaces/ns1/pods/p1");
  Json body = Json::parse(req.body);
  CHECK(body["kind"] == "DeleteOptions");
  CHECK(body["propagationPolicy"] == "Foreground");
  CHECK(body["preconditions"]["uid"] == "uid-1");
  CHECK(body["preconditions"]["resourceVersion"] == "42");
  CHECK(body["gracePeriodSeconds"] == 0);

  REQUIRE(f.client->Delete(resources::Pods(), "ns1", "p2").ok());
  body = Json::parse(f.server.last().body);
  CHECK_FALSE(body.contains("propagationPolicy"));
  CHECK_FALSE(body.contains("preconditions"));
  CHECK(absl::IsNotFound(f.client->Delete(resources::Pods(), "ns1", "gone")));
  CHECK(f.client->Delete(resources::Pods(), "ns1", "silent").ok());
}

TEST_CASE("Status bodies map to distinct errors", "[rest]") {
  Fixture f;
  // The test names the answer in the object name: /api/v1/namespaces/ns/pods/<code>-<reason>.
  f.server.server().Get(".*", [](const httplib::Request& req, httplib::Response& res) {
    const std::string name = req.path.substr(req.path.rfind('/') + 1);
    const int code = std::stoi(name.substr(0, 3));
    const std::string reason = name.size() > 4 ? name.substr(4) : "";
    if (reason == "plain") {
      res.status = code;
      res.set_content("upstream broke", "text/plain");
      return;
    }
    Json body = StatusBody(code, reason, "message for " + name);
    if (reason == "Invalid") {
      body["details"] = {{"causes", {{{"reason", "FieldValueRequired"},
                                      {"message", "Required value"},
                                      {"field", "spec.url"}}}}};
    }
    Reply(res, code, body);
  });
  auto get = [&](const std::string& name) { return f.client->Get(Datasets(), "ns", name).status(); };
  CHECK(absl::IsNotFound(get("404-NotFound")));
  CHECK(absl::IsAlreadyExists(get("409-AlreadyExists")));
  CHECK(IsConflict(get("409-Conflict")));
  CHECK(IsGone(get("410-Gone")));
  CHECK(IsGone(get("410-Expired")));
  CHECK(IsForbidden(get("403-Forbidden")));
  CHECK(IsUnauthorized(get("401-Unauthorized")));
  CHECK(IsTooManyRequests(get("429-TooManyRequests")));  // No Retry-After: not retried.
  CHECK(get("400-BadRequest").code() == absl::StatusCode::kInvalidArgument);
  CHECK(get("405-MethodNotAllowed").code() == absl::StatusCode::kUnimplemented);
  CHECK(get("503-ServiceUnavailable").code() == absl::StatusCode::kUnavailable);
  CHECK(get("504-Timeout").code() == absl::StatusCode::kDeadlineExceeded);
  CHECK(get("500-InternalError").code() == absl::StatusCode::kInternal);
  CHECK(get("502-plain").code() == absl::StatusCode::kInternal);
  CHECK(get("404-plain").code() == absl::StatusCode::kNotFound);
  absl::Status invalid = get("422-Invalid");
  REQUIRE(IsInvalid(invalid));
  CHECK(Reason(invalid) == "Invalid");
  REQUIRE(Causes(invalid).size() == 1);
  CHECK(Causes(invalid)[0].field == "spec.url");
  CHECK(invalid.message() == "message for 422-Invalid");
  // 5xx without Retry-After is returned at once: one request each.
  CHECK(f.server.request_count() == 16);
}

TEST_CASE("Retry-After on 429 is waited out on the clock, then retried", "[rest]") {
  Fixture f;
  std::atomic<int> calls{0};
  f.server.server().Post(".*", [&](const httplib::Request&, httplib::Response& res) {
    if (calls.fetch_add(1) == 0) {
      res.set_header("Retry-After", "3");
      Reply(res, 429, StatusBody(429, "TooManyRequests", "slow down"));
      return;
    }
    Reply(res, 201, Pod("ns1", "p1"));
  });
  const absl::Time start = f.clock.Now();
  auto result = std::async(std::launch::async, [&] {
    return f.client->Create(resources::Pods(), "ns1", Pod("ns1", "p1"));
  });
  REQUIRE(Eventually([&] { return f.clock.timed_waiters() == 1; }));
  CHECK(calls.load() == 1);
  CHECK(result.wait_for(std::chrono::milliseconds(20)) == std::future_status::timeout);
  f.clock.Advance(absl::Seconds(2));
  CHECK(result.wait_for(std::chrono::milliseconds(20)) == std::future_status::timeout);
  f.clock.Advance(absl::Seconds(1));
  REQUIRE(result.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
  CHECK(result.get().ok());  // POST too: the server asked for the retry.
  CHECK(calls.load() == 2);
  CHECK(f.clock.Now() - start == absl::Seconds(3));
}

TEST_CASE("Retries are bounded and long Retry-After values are capped", "[rest]") {
  RestClient::Options options;
  options.max_retries = 3;
  options.max_retry_after = absl::Seconds(5);
  Fixture f(options);
  std::atomic<int> calls{0};
  f.server.server().Get(".*", [&](const httplib::Request&, httplib::Response& res) {
    calls.fetch_add(1);
    res.set_header("Retry-After", "3600");
    Reply(res, 503, StatusBody(503, "ServiceUnavailable", "overloaded"));
  });
  auto result = std::async(std::launch::async,
                           [&] { return f.client->Get(resources::Pods(), "ns1", "p1"); });
  for (int i = 1; i <= 3; ++i) {
    REQUIRE(Eventually([&] { return f.clock.timed_waiters() == 1 && calls.load() == i; }));
    f.clock.Advance(absl::Seconds(5));  // The cap, not the server's hour.
  }
  REQUIRE(result.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
  absl::Status status = result.get().status();
  CHECK(status.code() == absl::StatusCode::kUnavailable);
  CHECK(RetryAfter(status) == absl::Seconds(3600));
  CHECK(calls.load() == 4);  // First try + 3 retries.
}

TEST_CASE("Every call has a timeout", "[rest]") {
  RestClient::Options options;
  options.timeout = absl::Milliseconds(300);
  Fixture f(options);
  absl::Mutex mu;
  bool release = false;
  f.server.server().Get(".*", [&](const httplib::Request&, httplib::Response& res) {
    absl::MutexLock lock(&mu);
    mu.AwaitWithTimeout(absl::Condition(&release), absl::Seconds(10));
    Reply(res, 200, Pod("ns1", "p1"));
  });
  const auto start = std::chrono::steady_clock::now();
  absl::Status status = f.client->Get(resources::Pods(), "ns1", "p1").status();
  const auto elapsed = std::chrono::steady_clock::now() - start;
  {
    absl::MutexLock lock(&mu);
    release = true;
  }
  CHECK(status.code() == absl::StatusCode::kDeadlineExceeded);
  CHECK(elapsed >= std::chrono::milliseconds(250));
  CHECK(elapsed < std::chrono::seconds(5));
}

// The URL of a server that was just stopped: connections to it are refused.
std::string UnreachableServerUrl() {
  int port = 0;
  {
    TestHttpServer closed;
    closed.Start();
    port = closed.port();
  }
  return "http://127.0.0.1:" + std::to_string(port);
}

TEST_CASE("Unreachable server is Unavailable, not retried", "[rest]") {
  KubeConfig config;
  config.server = UnreachableServerUrl();
  FakeClock clock;
  RestClient::Options options;
  options.clock = &clock;
  auto client = RestClient::Create(config, options);
  REQUIRE(client.ok());
  absl::Status status = (*client)->Get(resources::Pods(), "ns1", "p1").status();
  CHECK(status.code() == absl::StatusCode::kUnavailable);
  CHECK(status.message().find("cannot connect") != std::string::npos);
}

TEST_CASE("Client-side QPS limit waits on the clock", "[rest]") {
  RestClient::Options options;
  options.qps = 2;
  options.burst = 2;
  Fixture f(options);
  f.server.server().Get(".*", [](const httplib::Request&, httplib::Response& res) {
    Reply(res, 200, Pod("ns1", "p1"));
  });
  auto run = std::async(std::launch::async, [&] {
    for (int i = 0; i < 4; ++i) {
      if (!f.client->Get(resources::Pods(), "ns1", "p1").ok()) return false;
    }
    return true;
  });
  // The burst goes through at once, the third request waits for a token.
  REQUIRE(Eventually([&] { return f.server.request_count() == 2 && f.clock.timed_waiters() == 1; }));
  CHECK(run.wait_for(std::chrono::milliseconds(20)) == std::future_status::timeout);
  CHECK(f.server.request_count() == 2);
  f.clock.Advance(absl::Milliseconds(500));  // One token at 2 qps.
  REQUIRE(Eventually([&] { return f.server.request_count() == 3 && f.clock.timed_waiters() == 1; }));
  f.clock.Advance(absl::Milliseconds(500));
  REQUIRE(run.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
  CHECK(run.get());
  CHECK(f.server.request_count() == 4);
}

class RecordingObserver final : public RequestObserver {
 public:
  void OnResponse(std::string_view method, int code) override {
    absl::MutexLock lock(&mu_);
    responses_.push_back(std::string(method) + " " + std::to_string(code));
  }
  void OnThrottled(absl::Duration waited) override {
    absl::MutexLock lock(&mu_);
    waited_ += waited;
  }
  std::vector<std::string> responses() {
    absl::MutexLock lock(&mu_);
    return responses_;
  }
  absl::Duration waited() {
    absl::MutexLock lock(&mu_);
    return waited_;
  }

 private:
  absl::Mutex mu_;
  std::vector<std::string> responses_ ABSL_GUARDED_BY(mu_);
  absl::Duration waited_ ABSL_GUARDED_BY(mu_);
};

TEST_CASE("The observer sees every attempt's code and every client-side wait", "[rest]") {
  RecordingObserver observer;
  RestClient::Options options;
  options.qps = 1;
  options.burst = 1;
  options.observer = &observer;
  Fixture f(options);
  std::atomic<int> calls{0};
  f.server.server().Get(".*", [&](const httplib::Request&, httplib::Response& res) {
    if (calls.fetch_add(1) == 0) {
      Reply(res, 429, StatusBody(429, "TooManyRequests", "slow down"));  // no Retry-After
      return;
    }
    Reply(res, 200, Pod("ns1", "p1"));
  });
  CHECK_FALSE(f.client->Get(resources::Pods(), "ns1", "p1").ok());
  // The burst of one is spent: the next request waits a second for its token.
  auto result = std::async(std::launch::async,
                           [&] { return f.client->Get(resources::Pods(), "ns1", "p1"); });
  REQUIRE(Eventually([&] { return f.clock.timed_waiters() == 1; }));
  f.clock.Advance(absl::Seconds(1));
  REQUIRE(result.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
  CHECK(result.get().ok());
  CHECK(observer.responses() == std::vector<std::string>{"GET 429", "GET 200"});
  CHECK(observer.waited() == absl::Seconds(1));

  // No answer at all: code 0.
  KubeConfig config;
  config.server = UnreachableServerUrl();
  RestClient::Options unreachable;
  unreachable.clock = &f.clock;
  unreachable.observer = &observer;
  auto client = RestClient::Create(config, unreachable);
  REQUIRE(client.ok());
  CHECK_FALSE((*client)->Get(resources::Pods(), "ns1", "p1").ok());
  CHECK(observer.responses().back() == "GET 0");
}

TEST_CASE("Concurrent callers each get their answer", "[rest]") {
  RestClient::Options options;
  options.qps = 0;  // Unlimited.
  Fixture f(options);
  f.server.server().Get(".*", [](const httplib::Request& req, httplib::Response& res) {
    Json obj = Pod("ns1", req.path.substr(req.path.rfind('/') + 1));
    Reply(res, 200, obj);
  });
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        const std::string name = "p" + std::to_string(t) + "-" + std::to_string(i);
        absl::StatusOr<Json> pod = f.client->Get(resources::Pods(), "ns1", name);
        if (pod.ok() && Name(*pod) == name) ok.fetch_add(1);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(ok.load() == 160);
  CHECK(f.server.request_count() == 160);
}

TEST_CASE("IsServed asks discovery", "[rest]") {
  Fixture f;
  f.server.server().Get("/api/v1", [](const httplib::Request&, httplib::Response& res) {
    Reply(res, 200, {{"kind", "APIResourceList"},
                     {"groupVersion", "v1"},
                     {"resources", {{{"name", 7}}, {{"name", "pods"}}, {{"name", "pods/status"}}}}});
  });
  f.server.server().Get("/apis/forbidden.io/v1", [](const httplib::Request&, httplib::Response& res) {
    Reply(res, 403, StatusBody(403, "Forbidden", "no"));
  });
  CHECK(*f.client->IsServed(resources::Pods()) == true);
  CHECK(*f.client->IsServed({"", "v1", "widgets", "Widget", true}) == false);
  absl::StatusOr<bool> volcano = f.client->IsServed(resources::PodGroups());
  REQUIRE(volcano.ok());  // 404 from discovery: not served.
  CHECK(*volcano == false);
  CHECK(f.server.last().path == "/apis/scheduling.volcano.sh/v1beta1");
  CHECK(IsForbidden(f.client->IsServed({"forbidden.io", "v1", "x", "X", true}).status()));
}

TEST_CASE("Server URL path prefix and GetPath", "[rest]") {
  TestHttpServer server;
  server.server().Get(".*", [](const httplib::Request&, httplib::Response& res) {
    Reply(res, 200, {{"gitVersion", "v1.32.0"}});
  });
  server.Start();
  KubeConfig config;
  config.server = server.url() + "/k8s/clusters/c1/";
  config.username = "admin";
  config.password = "pw";
  auto client = RestClient::Create(config);
  REQUIRE(client.ok());
  absl::StatusOr<Json> version = (*client)->GetPath("/version");
  REQUIRE(version.ok());
  CHECK((*version)["gitVersion"] == "v1.32.0");
  CHECK(server.last().path == "/k8s/clusters/c1/version");
  CHECK(server.last().Header("Authorization") == "Basic YWRtaW46cHc=");
  REQUIRE((*client)->Get(resources::Pods(), "a", "b").ok());
  CHECK(server.last().path == "/k8s/clusters/c1/api/v1/namespaces/a/pods/b");
}

TEST_CASE("Query component encoding", "[rest]") {
  CHECK(EncodeQueryComponent("az-AZ_09.~") == "az-AZ_09.~");
  CHECK(EncodeQueryComponent("a b,c=d!e/f+g&h") == "a%20b%2Cc%3Dd%21e%2Ff%2Bg%26h");
  CHECK(EncodeQueryComponent("\xc3\xa9") == "%C3%A9");
}

}  // namespace
}  // namespace nereid::kube

// A raw HTTP/1.1 server for connection-level behaviour httplib's server cannot script: it answers
// the first request on every connection with keep-alive, then closes the connection when a second
// request arrives on it without answering (a keep-alive race with the server closing).
namespace nereid::kube {
namespace {

class ClosingServer {
 public:
  ClosingServer() {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
    REQUIRE(::listen(listen_fd_, 16) == 0);
    socklen_t len = sizeof(addr);
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~ClosingServer() {
    ::shutdown(listen_fd_, SHUT_RDWR);
    ::close(listen_fd_);
    thread_.join();
  }
  int port() const { return port_; }
  int requests() const { return requests_.load(); }

 private:
  void Serve() {
    while (true) {
      const int fd = ::accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) return;
      // One connection at a time is enough for a sequential client; bounded by the client.
      for (int n = 0;; ++n) {
        std::string head;
        char c;
        while (head.find("\r\n\r\n") == std::string::npos && ::recv(fd, &c, 1, 0) == 1) head += c;
        if (head.find("\r\n\r\n") == std::string::npos) break;
        requests_.fetch_add(1);
        if (const size_t cl = head.find("Content-Length: "); cl != std::string::npos) {
          size_t remaining = std::stoul(head.substr(cl + 16));
          while (remaining > 0 && ::recv(fd, &c, 1, 0) == 1) --remaining;
        }
        if (n > 0) break;  // Second request on this connection: close without answering.
        const std::string body = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p1"}})";
        const std::string response = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                     "Connection: keep-alive\r\nContent-Length: " +
                                     std::to_string(body.size()) + "\r\n\r\n" + body;
        ::send(fd, response.data(), response.size(), MSG_NOSIGNAL);
      }
      ::close(fd);
    }
  }

  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<int> requests_{0};
  std::thread thread_;
};

TEST_CASE("A GET on a pooled connection the server closed is resent on a new one", "[rest]") {
  ClosingServer server;
  KubeConfig config;
  config.server = "http://127.0.0.1:" + std::to_string(server.port());
  FakeClock clock;
  RestClient::Options options;
  options.clock = &clock;
  auto client = RestClient::Create(config, options);
  REQUIRE(client.ok());
  REQUIRE((*client)->Get(resources::Pods(), "ns1", "p1").ok());
  REQUIRE((*client)->Get(resources::Pods(), "ns1", "p1").ok());  // Reused, closed, resent.
  CHECK(server.requests() == 3);
  // A POST is not resent: the server may have acted on it.
  absl::Status post = (*client)->Create(resources::Pods(), "ns1", Pod("ns1", "p2")).status();
  CHECK(post.code() == absl::StatusCode::kUnavailable);
  CHECK(server.requests() == 4);
}

}  // namespace
}  // namespace nereid::kube
