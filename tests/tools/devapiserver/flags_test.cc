#include "tools/devapiserver/flags.h"

#include <catch2/catch.hpp>

#include "tools/devapiserver/kubeconfig.h"

namespace nereid::devapi {
namespace {

TEST_CASE("flags: listen, durations, counts, TLS pair, loopback only") {
  auto c = ParseFlags({"--listen", "127.0.0.1:8080", "--data=/tmp/x.db", "--watch-history", "5",
                       "--bookmark-interval", "250ms", "--kubeconfig-out", "/tmp/kc",
                       "--event-ttl", "10m"});
  REQUIRE(c.ok());
  CHECK(c->host == "127.0.0.1");
  CHECK(c->port == 8080);
  CHECK(c->data_file == "/tmp/x.db");
  CHECK(c->watch_history == 5);
  CHECK(c->bookmark_interval == absl::Milliseconds(250));
  CHECK(c->kubeconfig_out == "/tmp/kc");
  CHECK(c->event_ttl == absl::Minutes(10));
  CHECK(ParseFlags({})->event_ttl == absl::Hours(1));
  auto v6 = ParseFlags({"--listen", "[::1]:0"});
  REQUIRE(v6.ok());
  CHECK(v6->host == "::1");
  CHECK_FALSE(ParseFlags({"--listen", "0.0.0.0:1"}).ok());
  CHECK(ParseFlags({"--listen", "0.0.0.0:1", "--allow-non-loopback"}).ok());
  CHECK_FALSE(ParseFlags({"--listen", "127.0.0.1"}).ok());
  CHECK_FALSE(ParseFlags({"--listen", "127.0.0.1:99999"}).ok());
  CHECK_FALSE(ParseFlags({"--tls-cert", "a"}).ok());
  CHECK_FALSE(ParseFlags({"--bookmark-interval", "soon"}).ok());
  CHECK_FALSE(ParseFlags({"--watch-history", "0"}).ok());
  CHECK_FALSE(ParseFlags({"--data"}).ok());
  CHECK_FALSE(ParseFlags({"--nope"}).ok());
  CHECK(ParseFlags({"--help"})->help);
  CHECK(Usage().find("DEVELOPMENT AND TESTS ONLY") != std::string::npos);
}

TEST_CASE("kubeconfig names one cluster, user and context and trusts the given CA") {
  KubeconfigOptions o;
  o.server_url = "https://127.0.0.1:4443";
  o.certificate_authority = "/tmp/ca.crt";
  std::string text = RenderKubeconfig(o);
  CHECK(text.find("server: \"https://127.0.0.1:4443\"") != std::string::npos);
  CHECK(text.find("certificate-authority: \"/tmp/ca.crt\"") != std::string::npos);
  CHECK(text.find("current-context: \"devapiserver\"") != std::string::npos);
  o.certificate_authority.clear();
  CHECK(RenderKubeconfig(o).find("insecure-skip-tls-verify: true") != std::string::npos);
  o.server_url = "http://127.0.0.1:1";
  CHECK(RenderKubeconfig(o).find("insecure-skip-tls-verify") == std::string::npos);
}

}  // namespace
}  // namespace nereid::devapi
