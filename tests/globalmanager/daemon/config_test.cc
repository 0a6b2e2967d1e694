// GM configuration: defaults < YAML file < environment < flags, Sedna's gm.yaml keys, and clear
// errors for everything malformed.

#include "globalmanager/config.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "common/net/host_port.h"
#include "tests/support/subprocess.h"

namespace nereid::gm {
namespace {

using Args = std::vector<std::string>;

EnvLookup Env(std::map<std::string, std::string> vars = {}) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

const Args kTls = {"--tls-ca", "/certs/ca.crt", "--tls-cert", "/certs/gm.crt", "--tls-key",
                   "/certs/gm.key"};

Args With(Args extra, const Args& base = kTls) {
  extra.insert(extra.begin(), base.begin(), base.end());
  return extra;
}

GmConfig MustLoad(const Args& args, const EnvLookup& env = Env()) {
  absl::StatusOr<CommandLine> loaded = LoadConfig(args, env);
  INFO(loaded.status().ToString());
  REQUIRE(loaded.ok());
  return loaded->config;
}

std::string ErrorOf(const Args& args, const EnvLookup& env = Env()) {
  absl::StatusOr<CommandLine> loaded = LoadConfig(args, env);
  REQUIRE_FALSE(loaded.ok());
  CHECK(loaded.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(loaded.status().message());
}

bool Has(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

struct ConfigFile {
  testing::TempDir dir = *testing::TempDir::Create("gm-config-");
  std::string Write(const std::string& yaml) { return *dir.Write("gm.yaml", yaml); }
};

TEST_CASE("defaults: Sedna's ports and servers, leader election on") {
  GmConfig c = MustLoad(kTls);
  CHECK(c.kubeconfig.empty());  // in-cluster / $KUBECONFIG / ~/.kube/config
  CHECK(c.ns.empty());
  CHECK(c.listen == "0.0.0.0:9000");
  CHECK(c.http_listen == "127.0.0.1:8080");
  CHECK(c.lc_server == "http://localhost:9100");
  CHECK(c.kb_server == "http://localhost:9020");
  CHECK(c.min_resync_period_seconds == 30);
  CHECK(c.kube_api_qps == 500);  // Not RestClient's 50: edge reports would queue (fan-out bench).
  CHECK(c.kube_api_burst == 1000);
  CHECK(c.max_held_reports == 16384);  // about half a minute of status writes at 500/s
  CHECK(c.edge_max_pending_handshakes == 256);
  CHECK(c.edge_max_connection_wait_seconds == 10);  // half of gRPC's 20 s connect deadline
  CHECK(c.edge_relay);
  CHECK_FALSE(c.ready_while_relaying);
  CHECK_FALSE(c.edge_shards);
  CHECK(c.edge_moves_per_second == 100);
  CHECK(c.tls.ca_file == "/certs/ca.crt");
  CHECK_FALSE(c.tls.insecure);
  CHECK(c.leader_election.enabled);
  CHECK(c.leader_election.lease_name == "nereid-gm");
  CHECK(c.leader_election.lease_namespace.empty());
  CHECK(c.leader_election.lease_duration == absl::Seconds(15));
  CHECK(c.leader_election.renew_deadline == absl::Seconds(10));
  CHECK(c.leader_election.retry_period == absl::Seconds(2));
  CHECK_FALSE(c.leader_election.identity.empty());  // hostname_random
  CHECK(MustLoad(kTls).leader_election.identity != c.leader_election.identity);
}

TEST_CASE("every flag, in both --flag value and --flag=value forms") {
  GmConfig c = MustLoad(With({"--kubeconfig", "/k/config", "--listen=127.0.0.1:0",
                              "--http-listen", "127.0.0.1:0", "--namespace=team-a",
                              "--leader-elect=false", "--lease-namespace", "sedna",
                              "--lease-name=gm-lock", "--id", "gm-0", "--lc-server",
                              "http://127.0.0.1:9100", "--kb-server=https://kb:9020",
                              "--min-resync-period-seconds", "0", "--controller-workers=3",
                              "--report-workers", "8", "--max-held-reports=5000",
                              "--edge-max-pending-handshakes=0", "--edge-relay=false",
                              "--edge-max-connection-wait-seconds", "3", "--kube-api-qps=0",
                              "--kube-api-burst", "20", "--log-level=debug"}));
  CHECK(c.kubeconfig == "/k/config");
  CHECK(c.listen == "127.0.0.1:0");
  CHECK(c.http_listen == "127.0.0.1:0");
  CHECK(c.ns == "team-a");
  CHECK_FALSE(c.leader_election.enabled);
  CHECK(c.leader_election.lease_namespace == "sedna");
  CHECK(c.leader_election.lease_name == "gm-lock");
  CHECK(c.leader_election.identity == "gm-0");
  CHECK(c.lc_server == "http://127.0.0.1:9100");
  CHECK(c.kb_server == "https://kb:9020");
  CHECK(c.min_resync_period_seconds == 0);
  CHECK(c.controller_workers == 3);
  CHECK(c.report_workers == 8);
  CHECK(c.max_held_reports == 5000);
  CHECK(c.edge_max_pending_handshakes == 0);  // 0: gRPC's own listener
  CHECK_FALSE(c.edge_relay);
  CHECK(c.edge_max_connection_wait_seconds == 3);
  CHECK(c.kube_api_qps == 0);  // 0: no client-side limit.
  CHECK(c.kube_api_burst == 20);
  CHECK(c.log_level == "debug");
  CHECK(MustLoad({"--insecure"}).tls.insecure);
  CHECK(MustLoad({"--insecure=true", "--leader-elect"}).leader_election.enabled);
}

TEST_CASE("Sedna's gm.yaml loads unchanged (websocket ignored with a warning)") {
  ConfigFile file;
  std::string path = file.Write(R"(
kubeConfig: ""
master: ""
namespace: ""
websocket:
  address: 0.0.0.0
  port: 9000
localController:
  server: http://localhost:9100
knowledgeBaseServer:
  server: http://kb.sedna:9020
minResyncPeriodSeconds: 45
)");
  absl::StatusOr<CommandLine> loaded = LoadConfig(With({"--config", path}), Env());
  REQUIRE(loaded.ok());
  CHECK(loaded->config.kb_server == "http://kb.sedna:9020");
  CHECK(loaded->config.min_resync_period_seconds == 45);
  CHECK(loaded->config.config_file == path);
  REQUIRE(loaded->warnings.size() == 1);
  CHECK(Has(loaded->warnings[0], "websocket"));
}

TEST_CASE("Nereid's file keys") {
  ConfigFile file;
  std::string path = file.Write(R"(
kubeConfig: /file/kubeconfig
namespace: from-file
listen: 0.0.0.0:9443
httpListen: 0.0.0.0:8080
tls: {ca: /file/ca.crt, cert: /file/gm.crt, key: /file/gm.key}
leaderElection:
  enabled: true
  leaseNamespace: file-ns
  leaseName: file-lease
  id: file-id
  leaseDuration: 30s
  renewDeadline: 20
  retryPeriod: 1m0s
controllerWorkers: 4
reportWorkers: 2
logLevel: warning
)");
  // retryPeriod 1m violates renewDeadline > 1.2 x retryPeriod.
  CHECK(Has(ErrorOf({"--config", path}), "renewDeadline"));
  std::string fixed = file.Write(R"(
httpListen: 0.0.0.0:8080
leaderElection: {enabled: false, leaseName: file-lease}
controllerWorkers: 4
reportWorkers: 2
maxHeldReports: 100000
edgeMaxPendingHandshakes: 64
edgeMaxConnectionWaitSeconds: 15
edgeRelay: false
kubeAPIQPS: 1000
kubeAPIBurst: 2000
logLevel: warning
insecure: true
edgeKeepalive: {time: 5s, timeout: 2s, minClientPingInterval: 500ms}
)");
  GmConfig c = MustLoad({"--config", fixed});
  CHECK(c.http_listen == "0.0.0.0:8080");
  CHECK_FALSE(c.leader_election.enabled);
  CHECK(c.leader_election.lease_name == "file-lease");
  CHECK(c.controller_workers == 4);
  CHECK(c.report_workers == 2);
  CHECK(c.max_held_reports == 100000);
  CHECK(c.edge_max_pending_handshakes == 64);
  CHECK(c.edge_max_connection_wait_seconds == 15);
  CHECK_FALSE(c.edge_relay);
  CHECK(c.kube_api_qps == 1000);
  CHECK(c.kube_api_burst == 2000);
  CHECK(c.log_level == "warning");
  CHECK(c.tls.insecure);
  CHECK(c.edge_keepalive.time == absl::Seconds(5));
  CHECK(c.edge_keepalive.timeout == absl::Seconds(2));
  CHECK(c.edge_keepalive.min_client_ping_interval == absl::Milliseconds(500));
  // Defaults (common/net/keepalive.h).
  CHECK(MustLoad(kTls).edge_keepalive.time == absl::Seconds(30));
}

TEST_CASE("S3 worker settings: Sedna's initializer image, secretKeyRef unless literal is asked") {
  GmConfig defaults = MustLoad(kTls);
  CHECK(defaults.storage_initializer_image == "kubeedge/sedna-storage-initializer:v0.3.0");
  CHECK_FALSE(defaults.literal_s3_credentials);
  GmConfig flags = MustLoad(
      With({"--storage-initializer-image=registry.local/init:v1", "--literal-s3-credentials"}));
  CHECK(flags.storage_initializer_image == "registry.local/init:v1");
  CHECK(flags.literal_s3_credentials);
  ConfigFile file;
  GmConfig from_file = MustLoad(With(
      {"--config", file.Write("storageInitializerImage: r/i:2\nliteralS3Credentials: true\n")}));
  CHECK(from_file.storage_initializer_image == "r/i:2");
  CHECK(from_file.literal_s3_credentials);
  CHECK(defaults.secret_cache_ttl_seconds == 30);
  CHECK(MustLoad(With({"--secret-cache-ttl-seconds=0"})).secret_cache_ttl_seconds == 0);
  CHECK(MustLoad(With({"--config", file.Write("secretCacheTTLSeconds: 5\n")}))
            .secret_cache_ttl_seconds == 5);
  CHECK(defaults.event_drain_timeout_seconds == 5);
  CHECK(MustLoad(With({"--event-drain-timeout-seconds=2"})).event_drain_timeout_seconds == 2);
  CHECK(MustLoad(With({"--config", file.Write("eventDrainTimeoutSeconds: 0\n")}))
            .event_drain_timeout_seconds == 0);
}

TEST_CASE("precedence with valid lease timings") {
  ConfigFile file;
  std::string path = file.Write(R"(
kubeConfig: /file/kubeconfig
namespace: from-file
listen: 0.0.0.0:9443
tls: {ca: /file/ca.crt, cert: /file/gm.crt, key: /file/gm.key}
leaderElection: {leaseNamespace: file-ns, id: file-id, leaseDuration: 30s, renewDeadline: 20,
                 retryPeriod: 5s}
)");
  GmConfig from_file = MustLoad({"--config", path});
  CHECK(from_file.kubeconfig == "/file/kubeconfig");
  CHECK(from_file.ns == "from-file");
  CHECK(from_file.listen == "0.0.0.0:9443");
  CHECK(from_file.tls.key_file == "/file/gm.key");
  CHECK(from_file.leader_election.identity == "file-id");
  CHECK(from_file.leader_election.lease_namespace == "file-ns");
  CHECK(from_file.leader_election.lease_duration == absl::Seconds(30));
  CHECK(from_file.leader_election.renew_deadline == absl::Seconds(20));
  CHECK(from_file.leader_election.retry_period == absl::Seconds(5));

  GmConfig from_env =
      MustLoad({"--config", path}, Env({{"POD_NAME", "gm-7f9c"}, {"POD_NAMESPACE", "sedna"}}));
  CHECK(from_env.leader_election.identity == "gm-7f9c");
  CHECK(from_env.leader_election.lease_namespace == "sedna");

  GmConfig from_flags = MustLoad({"--config", path, "--id", "flag-id", "--namespace=flag-ns",
                                  "--listen", "127.0.0.1:1234", "--tls-key", "/flag/gm.key"},
                                 Env({{"POD_NAME", "gm-7f9c"}}));
  CHECK(from_flags.leader_election.identity == "flag-id");
  CHECK(from_flags.ns == "flag-ns");
  CHECK(from_flags.listen == "127.0.0.1:1234");
  CHECK(from_flags.tls.key_file == "/flag/gm.key");
  CHECK(from_flags.tls.ca_file == "/file/ca.crt");
}

TEST_CASE("clear errors for malformed flags") {
  CHECK(Has(ErrorOf({}), "--tls-ca, --tls-cert and --tls-key"));
  CHECK(Has(ErrorOf({"--tls-ca", "a", "--tls-cert", "b"}), "--tls-key"));
  CHECK(Has(ErrorOf(With({"--insecure"})), "contradict"));
  CHECK(Has(ErrorOf(With({"--bogus"})), "unknown flag --bogus"));
  CHECK(Has(ErrorOf(With({"stray"})), "unexpected argument \"stray\""));
  CHECK(Has(ErrorOf(With({"--listen"})), "--listen needs a value"));
  CHECK(Has(ErrorOf(With({"--listen", "9000"})), "--listen"));
  CHECK(Has(ErrorOf(With({"--listen", "host:70000"})), "0-65535"));
  CHECK(Has(ErrorOf(With({"--http-listen", "::1:80"})), "[addr]:port"));
  CHECK(Has(ErrorOf(With({"--leader-elect=maybe"})), "not a boolean"));
  CHECK(Has(ErrorOf(With({"--lc-server", "localhost:9100"})), "http(s)://"));
  CHECK(Has(ErrorOf(With({"--controller-workers", "0"})), "out of range"));
  CHECK(Has(ErrorOf(With({"--report-workers", "x"})), "not an integer"));
  CHECK(Has(ErrorOf(With({"--log-level", "loud"})), "--log-level"));
  CHECK(Has(ErrorOf(With({"--lease-name="})), "--lease-name"));
  CHECK(MustLoad(With({"--listen", "[::1]:9000"})).listen == "[::1]:9000");
  absl::StatusOr<CommandLine> help = LoadConfig({"--help"}, Env());
  REQUIRE(help.ok());
  CHECK(help->help);
}

TEST_CASE("clear errors for malformed config files") {
  ConfigFile file;
  CHECK(Has(ErrorOf(With({"--config", file.dir.File("missing.yaml")})), "cannot read"));
  CHECK(Has(ErrorOf(With({"--config", file.Write("listen: [unclosed")})), "not valid YAML"));
  CHECK(Has(ErrorOf(With({"--config", file.Write("- a\n- b\n")})), "must be a YAML map"));
  CHECK(Has(ErrorOf(With({"--config", file.Write("lisen: 0.0.0.0:1\n")})), "key lisen: unknown"));
  CHECK(Has(ErrorOf(With({"--config", file.Write("tls: {ca: a, crt: b}\n")})),
            "key tls.crt: unknown"));
  CHECK(Has(ErrorOf(With({"--config", file.Write("master: https://10.0.0.1\n")})),
            "kubeconfig"));
  CHECK(Has(ErrorOf(With({"--config", file.Write("minResyncPeriodSeconds: soon\n")})),
            "minResyncPeriodSeconds"));
  CHECK(Has(ErrorOf(With({"--config", file.Write("localController: {server: [a]}\n")})),
            "must be a scalar"));
  CHECK(Has(ErrorOf(With({"--config", file.Write("leaderElection: {leaseDuration: forever}\n")})),
            "not a duration"));
  CHECK(Has(ErrorOf(With({"--config", file.Write("edgeKeepalive: {timeout: 0s}\n")})),
            "at least 1s"));
  CHECK(Has(ErrorOf(With({"--config", file.Write("edgeKeepalive: {pings: 1}\n")})),
            "edgeKeepalive.pings: unknown"));
  // An empty file changes nothing.
  CHECK(MustLoad(With({"--config", file.Write("")})).listen == "0.0.0.0:9000");
}

TEST_CASE("ParseHostPort") {
  CHECK(net::ParseHostPort("0.0.0.0:9000")->port == 9000);
  CHECK(net::ParseHostPort("[::]:0")->host == "::");
  CHECK_FALSE(net::ParseHostPort(":80").ok());
  CHECK_FALSE(net::ParseHostPort("host:").ok());
  CHECK_FALSE(net::ParseHostPort("[::1]9000").ok());
}

TEST_CASE("edge advertise address: none by default, $POD_IP or a flag, the listen port added") {
  CHECK(MustLoad(kTls).edge_advertise_address.empty());
  CHECK(MustLoad(kTls, Env({{"POD_IP", "10.1.2.3"}})).edge_advertise_address == "10.1.2.3:9000");
  CHECK(MustLoad(With({"--listen", "0.0.0.0:7600"}), Env({{"POD_IP", "fd00::7"}}))
            .edge_advertise_address == "[fd00::7]:7600");
  CHECK(MustLoad(With({"--edge-advertise-address", "gm-0.gm.sedna:9443"}),
                 Env({{"POD_IP", "10.1.2.3"}}))
            .edge_advertise_address == "gm-0.gm.sedna:9443");
  ConfigFile file;
  CHECK(MustLoad(With({"--config", file.Write("edgeAdvertiseAddress: gm-1.local\n")}))
            .edge_advertise_address == "gm-1.local:9000");
  CHECK(Has(ErrorOf(With({"--edge-advertise-address", "host:port"})), "--edge-advertise-address"));
}

TEST_CASE("a standby ready while relaying needs the relay and leader election") {
  CHECK(MustLoad(With({"--ready-while-relaying"})).ready_while_relaying);
  CHECK(Has(ErrorOf(With({"--ready-while-relaying", "--edge-relay=false"})),
            "--ready-while-relaying"));
  CHECK(Has(ErrorOf(With({"--ready-while-relaying", "--leader-elect=false"})),
            "needs --edge-relay and leader election"));
}

TEST_CASE("edge shards need the relay, leader election and an edge address") {
  const std::vector<std::string> shards = {"--edge-shards", "--edge-advertise-address", "10.0.0.1"};
  GmConfig c = MustLoad(With(shards));
  CHECK(c.edge_shards);
  CHECK(c.edge_moves_per_second == 100);
  std::vector<std::string> args = shards;
  args.insert(args.end(), {"--edge-moves-per-second", "20"});
  CHECK(MustLoad(With(args)).edge_moves_per_second == 20);
  CHECK(MustLoad(With({"--edge-shards"}), Env({{"POD_IP", "10.1.2.3"}})).edge_shards);
  CHECK(Has(ErrorOf(With({"--edge-shards"})), "needs the address where nodes reach"));
  args = shards;
  args.push_back("--edge-relay=false");
  CHECK(Has(ErrorOf(With(args)), "--edge-shards"));
  args = shards;
  args.push_back("--leader-elect=false");
  CHECK(Has(ErrorOf(With(args)), "needs --edge-relay and leader election"));
  args = shards;
  args.insert(args.end(), {"--edge-moves-per-second", "0"});
  CHECK(Has(ErrorOf(With(args)), "--edge-moves-per-second"));
  ConfigFile file;
  c = MustLoad(With({"--config", file.Write("edgeShards: true\nedgeMovesPerSecond: 50\n"
                                            "edgeAdvertiseAddress: gm-1.local\n")}));
  CHECK(c.edge_shards);
  CHECK(c.edge_moves_per_second == 50);
}

}  // namespace
}  // namespace nereid::gm
