#include "localcontroller/config.h"

#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "tests/localcontroller/dataset/temp_dir.h"

namespace nereid::lc {
namespace {

using dataset::testing::TempDir;

EnvLookup Env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

LcConfig MustLoad(const std::vector<std::string>& args, const EnvLookup& env = Env({})) {
  absl::StatusOr<CommandLine> loaded = LoadConfig(args, env);
  INFO(loaded.status());
  REQUIRE(loaded.ok());
  REQUIRE_FALSE(loaded->help);
  return loaded->config;
}

std::string LoadError(const std::vector<std::string>& args, const EnvLookup& env = Env({})) {
  absl::StatusOr<CommandLine> loaded = LoadConfig(args, env);
  REQUIRE_FALSE(loaded.ok());
  CHECK(loaded.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(loaded.status().message());
}

const std::vector<std::string> kTls = {"--tls-ca", "ca.crt", "--tls-cert", "n.crt", "--tls-key",
                                       "n.key"};

std::vector<std::string> With(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

TEST_CASE("the documented command line is understood", "[lc][config]") {
  LcConfig c = MustLoad({"--node", "edge-1", "--gm", "gm.sedna:9000", "--db", "/var/lib/lc.db",
                         "--host-root", "/rootfs", "--listen", "127.0.0.1:9100", "--tls-ca",
                         "ca.crt", "--tls-cert", "edge-1.crt", "--tls-key", "edge-1.key",
                         "--scan-period", "90s"});
  CHECK(c.node_name == "edge-1");
  CHECK(c.gm_address == "gm.sedna:9000");
  CHECK(c.db_path == "/var/lib/lc.db");
  CHECK(c.host_root == "/rootfs");
  CHECK(c.listen == "127.0.0.1:9100");
  CHECK(c.tls.ca_file == "ca.crt");
  CHECK(c.tls.cert_file == "edge-1.crt");
  CHECK(c.tls.key_file == "edge-1.key");
  CHECK_FALSE(c.tls.insecure);
  CHECK(c.scan_period == absl::Seconds(90));

  LcConfig eq = MustLoad({"--node=edge-2", "--gm=gm:9000", "--insecure", "--scan-period=2m",
                          "--model-check-period=30", "--http-threads=2", "--log-level=debug",
                          "--http-max-connections=64"});
  CHECK(eq.node_name == "edge-2");
  CHECK(eq.tls.insecure);
  CHECK(eq.scan_period == absl::Minutes(2));
  CHECK(eq.model_check_period == absl::Seconds(30));
  CHECK(eq.http_threads == 2);
  CHECK(eq.http_max_connections == 64);
  CHECK(eq.log_level == "debug");
  // Defaults.
  CHECK(eq.host_root == "/rootfs");
  CHECK(eq.db_path == "/rootfs/var/lib/nereid/lc.db");
  CHECK(eq.listen == "127.0.0.1:9100");
  CHECK(eq.max_request_bytes == 1u << 20);
  CHECK(MustLoad({"--node=edge-2", "--gm=gm:9000", "--insecure"}).http_max_connections == 4096);
  CHECK(eq.s3_addressing == "auto");
  CHECK(eq.s3_ca_file.empty());
  CHECK(eq.keepalive_time == absl::Seconds(30));
  CHECK(eq.keepalive_timeout == absl::Seconds(10));
  LcConfig fast = MustLoad({"--node=n", "--gm=g:1", "--insecure", "--keepalive-time", "2s",
                            "--keepalive-timeout=1s"});
  CHECK(fast.keepalive_time == absl::Seconds(2));
  CHECK(fast.keepalive_timeout == absl::Seconds(1));
  LcConfig s3 = MustLoad({"--node=n", "--gm=g:1", "--insecure", "--s3-ca", "/etc/s3-ca.pem",
                          "--s3-addressing", "path"});
  CHECK(s3.s3_ca_file == "/etc/s3-ca.pem");
  CHECK(s3.s3_addressing == "path");

  CHECK_FALSE(MustLoad({"--node", "n", "--gm", "g:1", "--insecure=false", "--tls-ca", "a",
                        "--tls-cert", "b", "--tls-key", "c"})
                  .tls.insecure);
  absl::StatusOr<CommandLine> help = LoadConfig({"--node", "n", "--help"}, Env({}));
  REQUIRE(help.ok());
  CHECK(help->help);
}

TEST_CASE("--data-roots takes absolute host paths, comma-separated", "[lc][config]") {
  const std::vector<std::string> base = With({"--node", "edge-1", "--gm", "gm.sedna:9000"}, kTls);
  CHECK(MustLoad(base).data_roots.empty());  // the whole host root
  CHECK(MustLoad(With(base, {"--data-roots", "/data,/var/lib/sedna/model-hot-update"})).data_roots ==
        std::vector<std::string>{"/data", "/var/lib/sedna/model-hot-update"});
  CHECK(LoadError(With(base, {"--data-roots=/data,data"})) ==
        "--data-roots: \"data\" is not an absolute host path (e.g. /data)");
}

TEST_CASE("Sedna's DaemonSet environment is honoured, flags win over it", "[lc][config]") {
  EnvLookup sedna = Env({{"NODENAME", "edge-9"},
                         {"GM_ADDRESS", "gm.sedna:9000"},
                         {"BIND_PORT", "9200"},
                         {"ROOTFS_MOUNT_DIR", "/host"}});
  LcConfig c = MustLoad(kTls, sedna);
  CHECK(c.node_name == "edge-9");
  CHECK(c.gm_address == "gm.sedna:9000");
  CHECK(c.listen == "127.0.0.1:9200");  // BIND_PORT sets the port; loopback stays
  CHECK(c.host_root == "/host");
  CHECK(c.db_path == "/host/var/lib/nereid/lc.db");

  LcConfig flags = MustLoad(With(kTls, {"--node", "edge-flag", "--listen", "0.0.0.0:9300",
                                        "--host-root", "/other"}),
                            sedna);
  CHECK(flags.node_name == "edge-flag");
  CHECK(flags.listen == "0.0.0.0:9300");
  CHECK(flags.host_root == "/other");
  CHECK(flags.gm_address == "gm.sedna:9000");

  CHECK_THAT(LoadError(kTls, Env({{"NODENAME", "n"}, {"GM_ADDRESS", "g:1"}, {"BIND_PORT", "x"}})),
             Catch::Contains("BIND_PORT"));
}

TEST_CASE("a YAML file sits between defaults and the environment", "[lc][config]") {
  TempDir dir;
  dir.Write("lc.yaml",
            "node: edge-file\n"
            "gm: gm.file:9000\n"
            "hostRoot: /file-root\n"
            "listen: 0.0.0.0:8000\n"
            "tls:\n"
            "  ca: /etc/nereid/ca.crt\n"
            "  cert: /etc/nereid/node.crt\n"
            "  key: /etc/nereid/node.key\n"
            "scanPeriod: 5m\n"
            "modelHttpCheckPeriod: 7200\n"
            "maxRequestBytes: 65536\n"
            "keepaliveTime: 1m\n"
            "keepaliveTimeout: 20s\n");
  LcConfig file = MustLoad({"--config", dir.Path("lc.yaml")});
  CHECK(file.node_name == "edge-file");
  CHECK(file.gm_address == "gm.file:9000");
  CHECK(file.host_root == "/file-root");
  CHECK(file.db_path == "/file-root/var/lib/nereid/lc.db");
  CHECK(file.listen == "0.0.0.0:8000");
  CHECK(file.tls.ca_file == "/etc/nereid/ca.crt");
  CHECK(file.scan_period == absl::Minutes(5));
  CHECK(file.model_http_check_period == absl::Hours(2));
  CHECK(file.max_request_bytes == 65536u);
  CHECK(file.keepalive_time == absl::Minutes(1));
  CHECK(file.keepalive_timeout == absl::Seconds(20));
  CHECK(file.config_file == dir.Path("lc.yaml"));

  LcConfig env = MustLoad({"--config", dir.Path("lc.yaml")},
                          Env({{"NODENAME", "edge-env"}, {"BIND_PORT", "9100"}}));
  CHECK(env.node_name == "edge-env");
  CHECK(env.listen == "0.0.0.0:9100");  // host from the file, port from the environment

  LcConfig flag = MustLoad({"--config", dir.Path("lc.yaml"), "--node", "edge-flag",
                            "--scan-period", "10s"},
                           Env({{"NODENAME", "edge-env"}}));
  CHECK(flag.node_name == "edge-flag");
  CHECK(flag.scan_period == absl::Seconds(10));

  dir.Write("empty.yaml", "");
  CHECK(MustLoad(With(kTls, {"--config", dir.Path("empty.yaml"), "--node", "n", "--gm", "g:1"}))
            .node_name == "n");
}

TEST_CASE("configuration errors name what is wrong", "[lc][config]") {
  TempDir dir;
  const std::vector<std::string> base = With(kTls, {"--node", "n", "--gm", "gm:9000"});

  CHECK_THAT(LoadError(With(kTls, {"--gm", "gm:9000"})), Catch::Contains("NODENAME"));
  CHECK_THAT(LoadError(With(kTls, {"--node", "n"})), Catch::Contains("GM_ADDRESS"));
  CHECK_THAT(LoadError(With(kTls, {"--node", "n", "--gm", "gm"})), Catch::Contains("HOST:PORT"));
  CHECK_THAT(LoadError(With(kTls, {"--node", "n", "--gm", "ws://gm:9000"})),
             Catch::Contains("HOST:PORT"));
  CHECK_THAT(LoadError({"--node", "n", "--gm", "gm:9000", "--tls-ca", "ca.crt"}),
             Catch::Contains("--tls-cert") && Catch::Contains("--insecure"));
  CHECK_THAT(LoadError(With(base, {"--nodes", "x"})), Catch::Contains("unknown flag --nodes"));
  CHECK_THAT(LoadError(With(base, {"--db"})), Catch::Contains("--db needs a value"));
  CHECK_THAT(LoadError(With(base, {"stray"})), Catch::Contains("unexpected argument"));
  CHECK_THAT(LoadError(With(base, {"--scan-period", "soon"})), Catch::Contains("--scan-period"));
  CHECK_THAT(LoadError(With(base, {"--scan-period", "0s"})), Catch::Contains("at least 1s"));
  CHECK_THAT(LoadError(With(base, {"--keepalive-timeout", "0s"})),
             Catch::Contains("--keepalive-timeout must be at least 1s"));
  CHECK_THAT(LoadError(With(base, {"--listen", "localhost"})), Catch::Contains("--listen"));
  CHECK_THAT(LoadError(With(base, {"--insecure=maybe"})), Catch::Contains("--insecure"));
  CHECK_THAT(LoadError(With(base, {"--http-threads", "0"})), Catch::Contains("--http-threads"));
  CHECK_THAT(LoadError(With(base, {"--http-max-connections", "8"})),
             Catch::Contains("--http-max-connections must be 16..1000000"));
  CHECK_THAT(LoadError(With(base, {"--log-level", "loud"})), Catch::Contains("--log-level"));
  CHECK_THAT(LoadError(With(base, {"--node", "two words"})), Catch::Contains("spaces"));
  CHECK_THAT(LoadError(With(base, {"--s3-addressing", "dns"})),
             Catch::Contains("--s3-addressing"));

  CHECK_THAT(LoadError(With(base, {"--config", dir.Path("missing.yaml")})),
             Catch::Contains("cannot be read"));
  dir.Write("typo.yaml", "nodeName: x\n");
  CHECK_THAT(LoadError(With(base, {"--config", dir.Path("typo.yaml")})),
             Catch::Contains("unknown key \"nodeName\""));
  dir.Write("tls.yaml", "tls:\n  certificate: x\n");
  CHECK_THAT(LoadError(With(base, {"--config", dir.Path("tls.yaml")})),
             Catch::Contains("unknown key \"certificate\""));
  dir.Write("list.yaml", "- a\n- b\n");
  CHECK_THAT(LoadError(With(base, {"--config", dir.Path("list.yaml")})),
             Catch::Contains("YAML map"));
  dir.Write("broken.yaml", "node: [unclosed\n");
  CHECK_THAT(LoadError(With(base, {"--config", dir.Path("broken.yaml")})),
             Catch::Contains("broken.yaml"));
  dir.Write("period.yaml", "scanPeriod: {a: 1}\n");
  CHECK_THAT(LoadError(With(base, {"--config", dir.Path("period.yaml")})),
             Catch::Contains("scanPeriod"));
}

}  // namespace
}  // namespace nereid::lc
