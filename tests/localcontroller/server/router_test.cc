#include "localcontroller/server/router.h"

#include <catch2/catch.hpp>

#include "common/net/host_port.h"

namespace nereid::lc::server {
namespace {

using Match = Router<int>::Match;

TEST_CASE("the router matches paths with parameters and tells 404 from 405", "[lc][server]") {
  Router<int> router;
  router.Add("GET", "/api/v1/datasets", 1);
  router.Add("GET", "/api/v1/datasets/{namespace}/{name}", 2);
  router.Add("POST", "/sedna/workers/{worker}/info", 3);
  router.Add("PUT", "/api/v1/datasets", 4);

  Match m = router.Find("GET", "/api/v1/datasets/default/ds-1");
  REQUIRE(m.kind == Match::Kind::kFound);
  CHECK(*m.handler == 2);
  CHECK(m.params == PathParams{{"namespace", "default"}, {"name", "ds-1"}});

  CHECK(*router.Find("GET", "/api/v1/datasets/").handler == 1);
  CHECK(*router.Find("HEAD", "/api/v1/datasets").handler == 1);
  CHECK(*router.Find("POST", "/sedna/workers/w-1/info").handler == 3);
  CHECK(router.Find("POST", "/sedna/workers/w-1/info").params.at("worker") == "w-1");

  Match wrong = router.Find("DELETE", "/api/v1/datasets");
  CHECK(wrong.kind == Match::Kind::kMethodNotAllowed);
  CHECK(wrong.allowed == std::vector<std::string>{"GET", "HEAD", "PUT"});
  CHECK(router.Find("GET", "/sedna/workers/w/info").allowed == std::vector<std::string>{"POST"});

  CHECK(router.Find("GET", "/api/v1/datasets/default").kind == Match::Kind::kNotFound);
  CHECK(router.Find("GET", "/api/v1/datasets/default/x/y").kind == Match::Kind::kNotFound);
  CHECK(router.Find("GET", "/api/v1/datasets//x").kind == Match::Kind::kNotFound);
  CHECK(router.Find("POST", "/sedna/workers//info").kind == Match::Kind::kNotFound);
  CHECK(router.Find("GET", "/").kind == Match::Kind::kNotFound);
  CHECK(router.Find("GET", "").kind == Match::Kind::kNotFound);
}

TEST_CASE("listen addresses", "[lc][server]") {
  absl::StatusOr<net::HostPort> a = net::ParseHostPort("127.0.0.1:9100", net::kAllInterfaces);
  REQUIRE(a.ok());
  CHECK(a->host == "127.0.0.1");
  CHECK(a->port == 9100);
  a = net::ParseHostPort(":9100", net::kAllInterfaces);
  REQUIRE(a.ok());
  CHECK(a->host == "0.0.0.0");
  a = net::ParseHostPort("[::1]:0", net::kAllInterfaces);
  REQUIRE(a.ok());
  CHECK(a->host == "::1");
  CHECK(a->ToString() == "[::1]:0");
  for (const char* bad : {"127.0.0.1", "127.0.0.1:", "127.0.0.1:70000", "127.0.0.1:-1",
                          "127.0.0.1:http", "::1:9100", "[::1]9100", "",
                          // found by fuzz_kube_parsers: printed as "[[x:10", which does not parse
                          "[[x]:10", "a]:10", "[a[]:10"}) {
    INFO(bad);
    CHECK(net::ParseHostPort(bad, net::kAllInterfaces).status().code() ==
          absl::StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace nereid::lc::server
