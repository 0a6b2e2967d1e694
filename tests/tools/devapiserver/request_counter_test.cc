#include "tools/devapiserver/request_counter.h"

#include <catch2/catch.hpp>

#include <string>
#include <thread>
#include <vector>

namespace nereid::devapi {
namespace {

std::vector<std::string> Parts(std::initializer_list<const char*> parts) {
  return {parts.begin(), parts.end()};
}

TEST_CASE("requests are classified as the API server's audit log names them") {
  auto kind = [](std::string_view method, std::vector<std::string> parts, bool watch = false) {
    RequestKind k = ClassifyRequest(method, parts, watch);
    return k.verb + " " + k.group + " " + k.resource;
  };
  CHECK(kind("GET", Parts({"api", "v1", "namespaces", "d", "pods", "p"})) == "get  pods");
  CHECK(kind("GET", Parts({"api", "v1", "namespaces", "d", "pods"})) == "list  pods");
  CHECK(kind("GET", Parts({"api", "v1", "pods"}), true) == "watch  pods");
  CHECK(kind("GET", Parts({"api", "v1", "watch", "namespaces", "d", "pods"})) == "watch  pods");
  CHECK(kind("POST", Parts({"apis", "apps", "v1", "namespaces", "d", "deployments"})) ==
        "create apps deployments");
  CHECK(kind("PUT", Parts({"apis", "sedna.io", "v1alpha1", "namespaces", "d",
                           "jointinferenceservices", "j", "status"})) ==
        "update sedna.io jointinferenceservices/status");
  CHECK(kind("PATCH", Parts({"api", "v1", "namespaces", "d", "events", "e"})) == "patch  events");
  CHECK(kind("DELETE", Parts({"api", "v1", "namespaces", "d", "pods"})) ==
        "deletecollection  pods");
  CHECK(kind("DELETE", Parts({"api", "v1", "namespaces", "d", "pods", "p"})) == "delete  pods");
  // Namespaces themselves: "status" after a name is a subresource, not a namespace.
  CHECK(kind("PUT", Parts({"api", "v1", "namespaces", "d", "status"})) ==
        "update  namespaces/status");
  CHECK(kind("GET", Parts({"apis"})) == "get  /apis");
  CHECK(kind("GET", Parts({"healthz"})) == "get  /healthz");
}

TEST_CASE("the counter adds up per verb, resource and user agent, concurrently, and resets") {
  RequestCounter counter;
  RequestKind get{"get", "jointinferenceservices", "sedna.io"};
  RequestKind create{"create", "deployments", "apps"};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 250; ++i) counter.Record(get, "gm");
    });
  }
  for (std::thread& t : threads) t.join();
  counter.Record(create, "gm");
  counter.Record(create, "bench");

  kube::Json snapshot = counter.Snapshot();
  CHECK(snapshot["total"] == 1002);
  REQUIRE(snapshot["requests"].size() == 3);
  // Key order: verb, group, resource, user agent.
  CHECK(snapshot["requests"][0] == kube::Json{{"verb", "create"}, {"group", "apps"},
                                              {"resource", "deployments"}, {"userAgent", "bench"},
                                              {"count", 1}});
  CHECK(snapshot["requests"][1]["userAgent"] == "gm");
  CHECK(snapshot["requests"][2]["count"] == 1000);

  counter.Reset();
  CHECK(counter.Snapshot()["total"] == 0);
  CHECK(counter.Snapshot()["requests"].empty());
}

}  // namespace
}  // namespace nereid::devapi
