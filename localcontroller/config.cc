#include "localcontroller/config.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/config/values.h"
#include "common/log/log.h"
#include "common/net/host_port.h"
#include "common/s3/s3_url.h"
#include "common/status/macros.h"
#include "common/strings/absl_compat.h"

namespace nereid::lc {
namespace {

// host:port with a non-empty host and a port 1..65535.
absl::Status ValidateGmAddress(const std::string& address) {
  const size_t colon = address.rfind(':');
  int port = 0;
  if (colon == std::string::npos || colon == 0 ||
      !absl::SimpleAtoi(ToAbsl(std::string_view(address).substr(colon + 1)), &port) || port < 1 ||
      port > 65535 || address.find("://") != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "GM address \"", address, "\" is not HOST:PORT (e.g. gm.sedna:9000)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateConfig(const LcConfig& c) {
  if (c.node_name.empty()) {
    return absl::InvalidArgumentError("node name is required: --node NAME (or env NODENAME)");
  }
  for (char ch : c.node_name) {
    if (absl::ascii_isspace(static_cast<unsigned char>(ch)) || ch == '/') {
      return absl::InvalidArgumentError(
          absl::StrCat("node name \"", c.node_name, "\" must not contain spaces or '/'"));
    }
  }
  if (c.gm_address.empty()) {
    return absl::InvalidArgumentError(
        "GM address is required: --gm HOST:PORT (or env GM_ADDRESS)");
  }
  RETURN_IF_ERROR(ValidateGmAddress(c.gm_address));
  if (c.host_root.empty()) return absl::InvalidArgumentError("--host-root must not be empty");
  if (c.db_path.empty()) return absl::InvalidArgumentError("--db must not be empty");
  for (const std::string& root : c.data_roots) {
    if (root.empty() || root.front() != '/') {
      return absl::InvalidArgumentError(absl::StrCat(
          "--data-roots: \"", root, "\" is not an absolute host path (e.g. /data)"));
    }
  }
  if (absl::Status listen = net::ParseHostPort(c.listen, net::kAllInterfaces).status();
      !listen.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--listen: ", listen.message()));
  }
  if (!c.metrics_listen.empty()) {
    if (absl::Status metrics = net::ParseHostPort(c.metrics_listen, net::kAllInterfaces).status();
        !metrics.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--metrics-listen: ", metrics.message()));
    }
  }
  RETURN_IF_ERROR(net::ValidateTlsOptions(c.tls));
  for (const auto& [name, period] :
       {std::pair<const char*, absl::Duration>{"--scan-period", c.scan_period},
        {"--model-check-period", c.model_check_period},
        {"--model-http-check-period", c.model_http_check_period},
        {"--keepalive-time", c.keepalive_time},
        {"--keepalive-timeout", c.keepalive_timeout}}) {
    if (period < absl::Seconds(1)) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, " must be at least 1s, got ", absl::FormatDuration(period)));
    }
  }
  if (absl::Status addressing = ::nereid::s3::ParseAddressing(c.s3_addressing).status();
      !addressing.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--s3-addressing: ", addressing.message()));
  }
  if (c.max_request_bytes < 1024) {
    return absl::InvalidArgumentError("--max-request-bytes must be at least 1024");
  }
  if (c.http_threads < 1 || c.http_threads > 64) {
    return absl::InvalidArgumentError("--http-threads must be 1..64");
  }
  if (c.http_max_connections < 16 || c.http_max_connections > 1'000'000) {
    return absl::InvalidArgumentError("--http-max-connections must be 16..1000000");
  }
  if (!c.log_level.empty()) {
    log::Level level;
    if (!log::ParseLevel(c.log_level, &level)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--log-level \"", c.log_level, "\" is not one of debug, info, warning, error"));
    }
  }
  return absl::OkStatus();
}

config::OptionSet RegisterOptions(LcConfig& c) {
  config::OptionSet options(
      "localcontroller",
      "usage: localcontroller --node NAME --gm HOST:PORT --tls-ca F --tls-cert F --tls-key F "
      "[flags]\n"
      "       localcontroller count --format F [flags] URL   (see localcontroller count --help)",
      "The LocalController of a Nereid edge node: receives the node's objects from the\n"
      "GlobalManager over mutual TLS, counts dataset samples, verifies models, takes Sedna\n"
      "worker reports on POST /sedna/workers/{worker}/info and serves the operator API.\n"
      "Settings: defaults < --config YAML file < environment < flags. Durations: 30s, 5m, 1h.\n");
  options.AddConfigFile("config", &c.config_file, "YAML config file");
  options.Add("node", &c.node_name, "this node's name (required)").Yaml("node").Env("NODENAME");
  options.Add("gm", &c.gm_address, "the GM's edge address HOST:PORT (required)")
      .Yaml("gm")
      .Env("GM_ADDRESS");
  options.Add("db", &c.db_path, "SQLite database (empty: <host-root>/var/lib/nereid/lc.db)")
      .Yaml("db");
  options.Add("host-root", &c.host_root, "where the host's filesystem is mounted")
      .Yaml("hostRoot")
      .Env("ROOTFS_MOUNT_DIR");
  options
      .AddCustom("data-roots", "DIR,DIR", "",
                 "host directories that dataset/model urls, outputDirs and the hot-update "
                 "directory must lie in, comma-separated (empty: the whole host root)",
                 [&c](std::string_view value, std::string*) -> absl::Status {
                   c.data_roots = absl::StrSplit(ToAbsl(value), ',', absl::SkipEmpty());
                   return absl::OkStatus();
                 })
      .Yaml("dataRoots");
  options.Add("listen", &c.listen, "REST address (Sedna's workers post to LC_SERVER here)")
      .Yaml("listen");
  options.Add("metrics-listen", &c.metrics_listen,
              "a second listener serving only GET /metrics (empty: none; /metrics stays on "
              "--listen)")
      .Yaml("metricsListen");
  options.Add("tls-ca", &c.tls.ca_file, "CA of the GM's certificate").Yaml("tls.ca");
  options.Add("tls-cert", &c.tls.cert_file, "this node's certificate").Yaml("tls.cert");
  options.Add("tls-key", &c.tls.key_file, "this node's key").Yaml("tls.key");
  options.Add("insecure", &c.tls.insecure,
              "plaintext gRPC without certificates (local experiments only)")
      .Yaml("insecure");
  options.Add("scan-period", &c.scan_period, "how often datasets are rescanned")
      .Yaml("scanPeriod");
  options.Add("model-check-period", &c.model_check_period, "how often local models are checked")
      .Yaml("modelCheckPeriod");
  options.Add("model-http-check-period", &c.model_http_check_period,
              "how often http(s) models are checked")
      .Yaml("modelHttpCheckPeriod");
  options.Add("keepalive-time", &c.keepalive_time, "HTTP/2 ping interval on a silent GM link")
      .Yaml("keepaliveTime");
  options.Add("keepalive-timeout", &c.keepalive_timeout,
              "the link is redialled when a ping is unanswered this long")
      .Yaml("keepaliveTimeout");
  options.Add("max-request-bytes", &c.max_request_bytes, "largest REST request body", 0)
      .Yaml("maxRequestBytes");
  options.Add("http-threads", &c.http_threads, "REST worker threads").Yaml("httpThreads");
  options.Add("http-max-connections", &c.http_max_connections, "REST connections open at once")
      .Yaml("httpMaxConnections");
  options.Add("s3-ca", &c.s3_ca_file, "CA bundle for https S3 endpoints (empty: the system's)")
      .Yaml("s3Ca");
  options.Add("s3-addressing", &c.s3_addressing, "S3 addressing style: auto|path|virtual")
      .Yaml("s3Addressing");
  options.Add("log-level", &c.log_level,
              "debug|info|warning|error (empty: $NEREID_LOG_LEVEL or info)")
      .Yaml("logLevel");
  // Sedna's DaemonSet sets BIND_PORT: the port of --listen; the host stays loopback unless the
  // file or a flag says otherwise (its workers run with hostNetwork and post to localhost).
  options.AddEnv("BIND_PORT", "the port of --listen (Sedna's DaemonSet)",
                 [&c](std::string_view value, std::string*) -> absl::Status {
                   ASSIGN_OR_RETURN(int64_t port, config::ParseInt(value, 0, 65535));
                   ASSIGN_OR_RETURN(net::HostPort address,
                                    net::ParseHostPort(c.listen, net::kAllInterfaces));
                   address.port = static_cast<int>(port);
                   c.listen = address.ToString();
                   return absl::OkStatus();
                 });
  return options;
}

absl::StatusOr<CommandLine> LoadConfig(const std::vector<std::string>& args, const EnvLookup& env) {
  CommandLine out;
  config::OptionSet options = RegisterOptions(out.config);
  ASSIGN_OR_RETURN(config::OptionSet::Loaded loaded, options.Load(args, env));
  out.help = loaded.help;
  out.version = loaded.version;
  out.warnings = std::move(loaded.warnings);
  if (out.help || out.version) return out;
  LcConfig& lc = out.config;
  if (lc.db_path.empty() && !lc.host_root.empty()) {
    lc.db_path = absl::StrCat(absl::StripSuffix(lc.host_root, "/"), "/var/lib/nereid/lc.db");
  }
  RETURN_IF_ERROR(ValidateConfig(lc));
  return out;
}

void PrintDaemonUsage(std::ostream& out) {
  LcConfig defaults;
  out << RegisterOptions(defaults).Help();
}

}  // namespace nereid::lc
