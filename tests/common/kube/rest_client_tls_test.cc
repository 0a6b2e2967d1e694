#include <catch2/catch.hpp>

#include "common/kube/config.h"
#include "common/kube/rest_client.h"
#include "common/time/fake_clock.h"
#include "tests/common/kube/test_certs.h"
#include "tests/common/kube/test_http_server.h"

namespace nereid::kube {
namespace {

using testing::MakeCa;
using testing::MakeLeaf;
using testing::Pem;
using testing::TempDir;
using testing::TestHttpServer;

// A CA, a server certificate for 127.0.0.1 and a client certificate, shared by the tests (key
// generation is the slow part).
struct Pki {
  Pki() {
    ca = MakeCa("nereid-test-ca");
    server = MakeLeaf(ca, "apiserver", /*server=*/true);
    client = MakeLeaf(ca, "system:node:edge-1", /*server=*/false);
    other_ca = MakeCa("some-other-ca");
    ca_path = dir.Write("ca.crt", ca.cert);
    server_cert_path = dir.Write("server.crt", server.cert);
    server_key_path = dir.Write("server.key", server.key);
  }
  TempDir dir;
  Pem ca, server, client, other_ca;
  std::string ca_path, server_cert_path, server_key_path;
};

const Pki& SharedPki() {
  static const Pki* pki = new Pki();
  return *pki;
}

void ServePods(TestHttpServer& server) {
  server.server().Get(".*", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p1"}})",
                    "application/json");
  });
}

TEST_CASE("HTTPS with CA verification and a client certificate", "[tls]") {
  const Pki& pki = SharedPki();
  TestHttpServer server(pki.server_cert_path, pki.server_key_path, /*client_ca=*/pki.ca_path);
  ServePods(server);
  server.Start();

  KubeConfig config;
  config.server = server.url();
  config.ca_pem = pki.ca.cert;
  config.client_cert_pem = pki.client.cert;
  config.client_key_pem = pki.client.key;
  auto client = RestClient::Create(config);
  REQUIRE(client.ok());
  absl::StatusOr<Json> pod = (*client)->Get(resources::Pods(), "ns1", "p1");
  REQUIRE(pod.ok());
  CHECK(Name(*pod) == "p1");

  // The same through a watch (its own connection and thread).
  auto stream = (*client)->Watch(resources::Pods(), "ns1", {});
  CHECK(stream.ok());

  SECTION("without the client certificate the server refuses the handshake") {
    KubeConfig no_cert = config;
    no_cert.client_cert_pem.clear();
    no_cert.client_key_pem.clear();
    auto anonymous = RestClient::Create(no_cert);
    REQUIRE(anonymous.ok());
    absl::Status refused = (*anonymous)->Get(resources::Pods(), "ns1", "p1").status();
    CHECK(refused.code() == absl::StatusCode::kUnavailable);
    CHECK(refused.message().find("failed") != std::string::npos);
  }
}

TEST_CASE("HTTPS refuses a server signed by another CA", "[tls]") {
  const Pki& pki = SharedPki();
  TestHttpServer server(pki.server_cert_path, pki.server_key_path);
  ServePods(server);
  server.Start();

  KubeConfig config;
  config.server = server.url();
  config.ca_pem = pki.other_ca.cert;
  auto client = RestClient::Create(config);
  REQUIRE(client.ok());
  absl::Status status = (*client)->Get(resources::Pods(), "ns1", "p1").status();
  CHECK(status.code() == absl::StatusCode::kUnavailable);
  CHECK(status.message().find("certificate") != std::string::npos);
  auto watch = (*client)->Watch(resources::Pods(), "ns1", {});
  REQUIRE_FALSE(watch.ok());
  CHECK(watch.status().message().find("certificate") != std::string::npos);

  SECTION("the system roots do not know the test CA either") {
    KubeConfig system_roots = config;
    system_roots.ca_pem.clear();
    auto strict = RestClient::Create(system_roots);
    REQUIRE(strict.ok());
    CHECK_FALSE((*strict)->Get(resources::Pods(), "ns1", "p1").ok());
  }
  SECTION("insecure-skip-tls-verify connects anyway") {
    KubeConfig insecure = config;
    insecure.ca_pem.clear();
    insecure.insecure_skip_tls_verify = true;
    auto lax = RestClient::Create(insecure);
    REQUIRE(lax.ok());
    CHECK((*lax)->Get(resources::Pods(), "ns1", "p1").ok());
  }
}

TEST_CASE("HTTPS checks the server name against the certificate", "[tls]") {
  const Pki& pki = SharedPki();
  TempDir dir;
  const Pem other_name = MakeLeaf(pki.ca, "elsewhere", /*server=*/true, "DNS:elsewhere.example");
  TestHttpServer server(dir.Write("s.crt", other_name.cert), dir.Write("s.key", other_name.key));
  ServePods(server);
  server.Start();
  KubeConfig config;
  config.ca_pem = pki.ca.cert;  // Trusted CA, wrong name.
  config.server = server.url();
  auto by_ip = RestClient::Create(config);
  REQUIRE(by_ip.ok());
  absl::Status status = (*by_ip)->Get(resources::Pods(), "ns1", "p1").status();
  CHECK(status.code() == absl::StatusCode::kUnavailable);
  CHECK(status.message().find("mismatch") != std::string::npos);
  config.server = "https://localhost:" + std::to_string(server.port());
  auto by_name = RestClient::Create(config);
  REQUIRE(by_name.ok());
  status = (*by_name)->Get(resources::Pods(), "ns1", "p1").status();
  CHECK(status.message().find("mismatch") != std::string::npos);
}

TEST_CASE("bad TLS material fails at Create", "[tls]") {
  const Pki& pki = SharedPki();
  KubeConfig config;
  config.server = "https://127.0.0.1:1";
  config.ca_pem = "not a certificate";
  CHECK(RestClient::Create(config).status().code() == absl::StatusCode::kInvalidArgument);
  config.ca_pem = pki.ca.cert;
  config.client_cert_pem = pki.client.cert;
  config.client_key_pem = pki.server.key;  // Does not match.
  absl::Status status = RestClient::Create(config).status();
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK(status.message().find("does not match") != std::string::npos);
}

TEST_CASE("in-cluster config: a rotated token is used after the recheck interval", "[tls]") {
  const Pki& pki = SharedPki();
  TestHttpServer server(pki.server_cert_path, pki.server_key_path);
  ServePods(server);
  server.Start();

  TempDir sa;
  sa.Write("token", "token-one\n");
  sa.Write("ca.crt", pki.ca.cert);
  sa.Write("namespace", "edge");
  InClusterOptions in_cluster;
  in_cluster.service_account_dir = sa.path();
  in_cluster.getenv = [&](const std::string& name) -> std::optional<std::string> {
    if (name == "KUBERNETES_SERVICE_HOST") return "127.0.0.1";
    if (name == "KUBERNETES_SERVICE_PORT") return std::to_string(server.port());
    return std::nullopt;
  };
  absl::StatusOr<KubeConfig> config = InClusterConfig(in_cluster);
  REQUIRE(config.ok());
  CHECK(config->default_namespace == "edge");

  FakeClock clock;
  RestClient::Options options;
  options.clock = &clock;
  options.token_recheck_interval = absl::Seconds(30);
  auto client = RestClient::Create(*config, options);
  REQUIRE(client.ok());
  REQUIRE((*client)->Get(resources::Pods(), "edge", "p1").ok());
  CHECK(server.last().Header("Authorization") == "Bearer token-one");

  sa.Write("token", "token-two-rotated\n");
  REQUIRE((*client)->Get(resources::Pods(), "edge", "p1").ok());
  CHECK(server.last().Header("Authorization") == "Bearer token-one");  // Not rechecked yet.
  clock.Advance(absl::Seconds(30));
  REQUIRE((*client)->Get(resources::Pods(), "edge", "p1").ok());
  CHECK(server.last().Header("Authorization") == "Bearer token-two-rotated");
}

TEST_CASE("kubeconfig on disk drives an HTTPS client end to end", "[tls]") {
  const Pki& pki = SharedPki();
  TestHttpServer server(pki.server_cert_path, pki.server_key_path, pki.ca_path);
  ServePods(server);
  server.Start();
  TempDir dir;
  dir.Write("certs/ca.pem", pki.ca.cert);
  dir.Write("certs/client.pem", pki.client.cert);
  dir.Write("certs/client-key.pem", pki.client.key);
  const std::string path = dir.Write("kubeconfig", "current-context: edge\n"
                                                   "clusters:\n"
                                                   "- name: c\n"
                                                   "  cluster:\n"
                                                   "    server: " + server.url() + "\n"
                                                   "    certificate-authority: certs/ca.pem\n"
                                                   "contexts:\n"
                                                   "- name: edge\n"
                                                   "  context: {cluster: c, user: u}\n"
                                                   "users:\n"
                                                   "- name: u\n"
                                                   "  user:\n"
                                                   "    client-certificate: certs/client.pem\n"
                                                   "    client-key: certs/client-key.pem\n");
  absl::StatusOr<KubeConfig> config = LoadKubeConfigFile(path);
  REQUIRE(config.ok());
  auto client = RestClient::Create(*config);
  REQUIRE(client.ok());
  CHECK((*client)->Get(resources::Pods(), "ns1", "p1").ok());
}

}  // namespace
}  // namespace nereid::kube
