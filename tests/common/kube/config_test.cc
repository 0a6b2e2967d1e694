#include "common/kube/config.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <map>

#include "absl/strings/escaping.h"
#include "common/kube/token_source.h"
#include "common/time/fake_clock.h"
#include "tests/common/kube/test_certs.h"

namespace nereid::kube {
namespace {

using testing::TempDir;

std::string B64(const std::string& s) { return absl::Base64Escape(s); }

std::function<std::optional<std::string>(const std::string&)> FakeEnv(
    std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

constexpr char kDataKubeconfig[] = R"(apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: other
  cluster:
    server: https://other.example:6443
- name: c1
  cluster:
    server: https://10.1.2.3:6443
    certificate-authority-data: %CA%
contexts:
- name: dev
  context:
    cluster: c1
    user: u1
    namespace: team-a
- name: prod
  context:
    cluster: other
    user: u2
users:
- name: u1
  user:
    client-certificate-data: %CERT%
    client-key-data: %KEY%
    token: secret-token-123
- name: u2
  user:
    token: prod-token
)";

std::string Fill(std::string text) {
  auto replace = [&](const std::string& from, const std::string& to) {
    text.replace(text.find(from), from.size(), to);
  };
  replace("%CA%", B64("CA-PEM"));
  replace("%CERT%", B64("CERT-PEM"));
  replace("%KEY%", B64("KEY-PEM"));
  return text;
}

TEST_CASE("kubeconfig with -data fields", "[config]") {
  absl::StatusOr<KubeConfig> config = ParseKubeConfig(Fill(kDataKubeconfig), "/nonexistent");
  REQUIRE(config.ok());
  CHECK(config->server == "https://10.1.2.3:6443");
  CHECK(config->default_namespace == "team-a");
  CHECK(config->ca_pem == "CA-PEM");
  CHECK(config->client_cert_pem == "CERT-PEM");
  CHECK(config->client_key_pem == "KEY-PEM");
  CHECK(config->bearer_token == "secret-token-123");
  CHECK(config->token_file.empty());
  CHECK_FALSE(config->insecure_skip_tls_verify);
  // DebugString names what is configured, never the secrets.
  const std::string debug = config->DebugString();
  CHECK(debug.find("secret-token-123") == std::string::npos);
  CHECK(debug.find("KEY-PEM") == std::string::npos);
  CHECK(debug.find("https://10.1.2.3:6443") != std::string::npos);
}

TEST_CASE("kubeconfig context override and default namespace", "[config]") {
  absl::StatusOr<KubeConfig> config = ParseKubeConfig(Fill(kDataKubeconfig), "/x", "prod");
  REQUIRE(config.ok());
  CHECK(config->server == "https://other.example:6443");
  CHECK(config->default_namespace == "default");
  CHECK(config->bearer_token == "prod-token");
  CHECK(config->ca_pem.empty());
}

TEST_CASE("kubeconfig missing context, cluster or user is a clear error", "[config]") {
  absl::StatusOr<KubeConfig> config = ParseKubeConfig(Fill(kDataKubeconfig), "/x", "nope");
  REQUIRE_FALSE(config.ok());
  CHECK(absl::IsNotFound(config.status()));
  CHECK(config.status().message().find("context \"nope\" not found") != std::string::npos);

  constexpr char kNoCluster[] = R"(current-context: a
contexts: [{name: a, context: {cluster: missing, user: u}}]
users: [{name: u, user: {token: t}}]
)";
  config = ParseKubeConfig(kNoCluster, "/x");
  REQUIRE_FALSE(config.ok());
  CHECK(config.status().message().find("cluster \"missing\"") != std::string::npos);

  constexpr char kNoUser[] = R"(current-context: a
clusters: [{name: c, cluster: {server: "http://127.0.0.1:1"}}]
contexts: [{name: a, context: {cluster: c, user: ghost}}]
)";
  config = ParseKubeConfig(kNoUser, "/x");
  REQUIRE_FALSE(config.ok());
  CHECK(config.status().message().find("user \"ghost\"") != std::string::npos);

  config = ParseKubeConfig("clusters: []\n", "/x");
  REQUIRE_FALSE(config.ok());
  CHECK(config.status().message().find("current-context") != std::string::npos);
}

TEST_CASE("kubeconfig malformed input is refused, not crashed on", "[config]") {
  CHECK(ParseKubeConfig("{{{{", "/x").status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(ParseKubeConfig("- a\n- b\n", "/x").status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(ParseKubeConfig("", "/x").status().code() == absl::StatusCode::kInvalidArgument);
  constexpr char kBadBase64[] = R"(current-context: a
clusters: [{name: c, cluster: {server: "https://h:1", certificate-authority-data: "!!!notb64"}}]
contexts: [{name: a, context: {cluster: c}}]
)";
  absl::StatusOr<KubeConfig> config = ParseKubeConfig(kBadBase64, "/x");
  REQUIRE_FALSE(config.ok());
  CHECK(config.status().message().find("base64") != std::string::npos);
  constexpr char kBadServer[] = R"(current-context: a
clusters: [{name: c, cluster: {server: "ftp://h:1"}}]
contexts: [{name: a, context: {cluster: c}}]
)";
  CHECK_FALSE(ParseKubeConfig(kBadServer, "/x").ok());
  constexpr char kInsecureWithCa[] = R"(current-context: a
clusters: [{name: c, cluster: {server: "https://h:1", insecure-skip-tls-verify: true, certificate-authority-data: "QQ=="}}]
contexts: [{name: a, context: {cluster: c}}]
)";
  CHECK_FALSE(ParseKubeConfig(kInsecureWithCa, "/x").ok());
  constexpr char kHalfCert[] = R"(current-context: a
clusters: [{name: c, cluster: {server: "https://h:1"}}]
contexts: [{name: a, context: {cluster: c, user: u}}]
users: [{name: u, user: {client-certificate-data: "QQ=="}}]
)";
  CHECK_FALSE(ParseKubeConfig(kHalfCert, "/x").ok());
  constexpr char kExec[] = R"(current-context: a
clusters: [{name: c, cluster: {server: "https://h:1"}}]
contexts: [{name: a, context: {cluster: c, user: u}}]
users: [{name: u, user: {exec: {command: aws}}}]
)";
  CHECK(ParseKubeConfig(kExec, "/x").status().code() == absl::StatusCode::kUnimplemented);
}

TEST_CASE("kubeconfig file fields are relative to the kubeconfig's directory", "[config]") {
  TempDir dir;
  dir.Write("pki/ca.crt", "CA-FROM-FILE");
  dir.Write("pki/client.crt", "CERT-FROM-FILE");
  const std::string abs_key = dir.Write("abs/client.key", "KEY-FROM-FILE");
  dir.Write("conf/token", "  file-token\n");
  const std::string path = dir.Write("conf/kubeconfig", R"(current-context: a
clusters:
- name: c
  cluster:
    server: https://127.0.0.1:6443/prefix/
    certificate-authority: ../pki/ca.crt
contexts: [{name: a, context: {cluster: c, user: u, namespace: ns1}}]
users:
- name: u
  user:
    client-certificate: ../pki/client.crt
    client-key: )" + abs_key + R"(
    tokenFile: token
)");
  absl::StatusOr<KubeConfig> config = LoadKubeConfigFile(path);
  REQUIRE(config.ok());
  CHECK(config->ca_pem == "CA-FROM-FILE");
  CHECK(config->client_cert_pem == "CERT-FROM-FILE");
  CHECK(config->client_key_pem == "KEY-FROM-FILE");
  CHECK(config->token_file == dir.path() + "/conf/token");
  CHECK(config->default_namespace == "ns1");
  CHECK(config->source.find(path) != std::string::npos);

  // A referenced file that is missing names the file.
  std::filesystem::remove(dir.path() + "/pki/ca.crt");
  config = LoadKubeConfigFile(path);
  REQUIRE_FALSE(config.ok());
  CHECK(config.status().message().find("pki/ca.crt") != std::string::npos);
  CHECK(absl::IsNotFound(LoadKubeConfigFile(dir.path() + "/none").status()));
}

TEST_CASE("insecure-skip-tls-verify is read from the cluster", "[config]") {
  constexpr char kInsecure[] = R"(current-context: a
clusters: [{name: c, cluster: {server: "https://h:1", insecure-skip-tls-verify: true}}]
contexts: [{name: a, context: {cluster: c}}]
)";
  absl::StatusOr<KubeConfig> config = ParseKubeConfig(kInsecure, "/x");
  REQUIRE(config.ok());
  CHECK(config->insecure_skip_tls_verify);
}

TEST_CASE("in-cluster config from env and the service-account directory", "[config]") {
  TempDir dir;
  dir.Write("token", "sa-token\n");
  dir.Write("ca.crt", "SA-CA");
  dir.Write("namespace", "edge-system\n");
  InClusterOptions options;
  options.service_account_dir = dir.path();
  options.getenv = FakeEnv({{"KUBERNETES_SERVICE_HOST", "10.96.0.1"},
                            {"KUBERNETES_SERVICE_PORT", "443"}});
  absl::StatusOr<KubeConfig> config = InClusterConfig(options);
  REQUIRE(config.ok());
  CHECK(config->server == "https://10.96.0.1:443");
  CHECK(config->token_file == dir.path() + "/token");
  CHECK(config->bearer_token.empty());  // Read through TokenSource, so rotation works.
  CHECK(config->ca_pem == "SA-CA");
  CHECK(config->default_namespace == "edge-system");
  CHECK(config->source == "in-cluster");

  options.getenv = FakeEnv({{"KUBERNETES_SERVICE_HOST", "fd00::1"},
                            {"KUBERNETES_SERVICE_PORT", "6443"},
                            {"POD_NAMESPACE", "from-env"}});
  config = InClusterConfig(options);
  REQUIRE(config.ok());
  CHECK(config->server == "https://[fd00::1]:6443");
  CHECK(config->default_namespace == "from-env");

  options.getenv = FakeEnv({});
  CHECK(InClusterConfig(options).status().code() == absl::StatusCode::kFailedPrecondition);

  std::filesystem::remove(dir.path() + "/token");
  options.getenv = FakeEnv({{"KUBERNETES_SERVICE_HOST", "10.96.0.1"},
                            {"KUBERNETES_SERVICE_PORT", "443"}});
  CHECK_FALSE(InClusterConfig(options).ok());
}

TEST_CASE("LoadKubeConfig resolution order", "[config]") {
  TempDir dir;
  auto kubeconfig = [](const std::string& server) {
    return "current-context: a\nclusters: [{name: c, cluster: {server: \"" + server +
           "\"}}]\ncontexts: [{name: a, context: {cluster: c}}]\n";
  };
  const std::string flag_path = dir.Write("flag.yaml", kubeconfig("http://flag:1"));
  const std::string env_path = dir.Write("env.yaml", kubeconfig("http://env:1"));
  dir.Write("home/.kube/config", kubeconfig("http://home:1"));
  dir.Write("sa/token", "t");

  LoadOptions options;
  options.in_cluster.service_account_dir = dir.path() + "/sa";
  std::map<std::string, std::string> env = {
      {"KUBECONFIG", dir.path() + "/missing.yaml:" + env_path},
      {"KUBERNETES_SERVICE_HOST", "10.0.0.1"},
      {"KUBERNETES_SERVICE_PORT", "443"},
      {"HOME", dir.path() + "/home"}};
  options.in_cluster.getenv = FakeEnv(env);

  options.kubeconfig_path = flag_path;
  CHECK(LoadKubeConfig(options)->server == "http://flag:1");
  options.kubeconfig_path.clear();
  CHECK(LoadKubeConfig(options)->server == "http://env:1");  // First existing file of the list.
  env.erase("KUBECONFIG");
  options.in_cluster.getenv = FakeEnv(env);
  CHECK(LoadKubeConfig(options)->server == "https://10.0.0.1:443");
  env.erase("KUBERNETES_SERVICE_HOST");
  options.in_cluster.getenv = FakeEnv(env);
  CHECK(LoadKubeConfig(options)->server == "http://home:1");
  env["HOME"] = dir.path() + "/nohome";
  options.in_cluster.getenv = FakeEnv(env);
  CHECK(absl::IsNotFound(LoadKubeConfig(options).status()));
  env["KUBECONFIG"] = dir.path() + "/a:" + dir.path() + "/b";
  options.in_cluster.getenv = FakeEnv(env);
  CHECK(absl::IsNotFound(LoadKubeConfig(options).status()));
}

TEST_CASE("server address parsing", "[config]") {
  absl::StatusOr<ServerAddress> a = ParseServerAddress("https://api.example.com:6443");
  REQUIRE(a.ok());
  CHECK(a->https);
  CHECK(a->host == "api.example.com");
  CHECK(a->port == 6443);
  CHECK(a->base_path.empty());

  a = ParseServerAddress("http://127.0.0.1/k8s/clusters/c1/");
  REQUIRE(a.ok());
  CHECK_FALSE(a->https);
  CHECK(a->port == 80);
  CHECK(a->base_path == "/k8s/clusters/c1");

  a = ParseServerAddress("https://[::1]:8443");
  REQUIRE(a.ok());
  CHECK(a->host == "::1");
  CHECK(a->port == 8443);

  a = ParseServerAddress("example.com");
  REQUIRE(a.ok());
  CHECK(a->https);
  CHECK(a->port == 443);

  CHECK_FALSE(ParseServerAddress("https://h:0").ok());
  CHECK_FALSE(ParseServerAddress("https://h:99999").ok());
  CHECK_FALSE(ParseServerAddress("https://h:x").ok());
  CHECK_FALSE(ParseServerAddress("https://:443").ok());
  CHECK_FALSE(ParseServerAddress("https://[::1").ok());
  CHECK_FALSE(ParseServerAddress("https://h/a?b=c").ok());
  CHECK_FALSE(ParseServerAddress("unix:///var/run/x").ok());
}

TEST_CASE("token file is re-read when it changes, at most every recheck interval", "[config]") {
  TempDir dir;
  const std::string path = dir.Write("token", "first\n");
  FakeClock clock;
  TokenSource source(path, absl::Seconds(10), &clock);
  CHECK(source.Token() == "first");

  dir.Write("token", "second-longer");
  CHECK(source.Token() == "first");  // Not rechecked yet.
  clock.Advance(absl::Seconds(10));
  CHECK(source.Token() == "second-longer");

  // A half-written rotation (empty file) keeps the last good token.
  dir.Write("token", "");
  clock.Advance(absl::Seconds(10));
  CHECK(source.Token() == "second-longer");
  dir.Write("token", "third");
  clock.Advance(absl::Seconds(10));
  CHECK(source.Token() == "third");

  // A vanished file too.
  std::filesystem::remove(path);
  clock.Advance(absl::Seconds(10));
  CHECK(source.Token() == "third");

  TokenSource fixed("static");
  CHECK(fixed.Token() == "static");
}

}  // namespace
}  // namespace nereid::kube
