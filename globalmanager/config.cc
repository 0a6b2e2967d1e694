#include "globalmanager/config.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/log/log.h"
#include "common/net/host_port.h"
#include "common/status/macros.h"
#include "common/strings/absl_compat.h"
#include "yaml-cpp/yaml.h"

namespace nereid::gm {
namespace {

using Setter = std::function<absl::Status(const std::string& value, GmConfig& config)>;

absl::Status Invalid(std::string_view where, std::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(ToAbsl(where), ": ", ToAbsl(message)));
}

absl::StatusOr<bool> ParseBool(const std::string& text) {
  const std::string lower = absl::AsciiStrToLower(text);
  if (lower == "true" || lower == "1" || lower == "t" || lower == "yes") return true;
  if (lower == "false" || lower == "0" || lower == "f" || lower == "no") return false;
  return absl::InvalidArgumentError(absl::StrCat("\"", text, "\" is not a boolean (true|false)"));
}

absl::StatusOr<int64_t> ParseInt(const std::string& text, int64_t min, int64_t max) {
  int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value)) {
    return absl::InvalidArgumentError(absl::StrCat("\"", text, "\" is not an integer"));
  }
  if (value < min || value > max) {
    return absl::InvalidArgumentError(
        absl::StrCat(value, " is out of range [", min, ", ", max, "]"));
  }
  return value;
}

// "15s", "1m30s", or integer seconds.
absl::StatusOr<absl::Duration> ParseDurationValue(const std::string& text) {
  int64_t seconds = 0;
  if (absl::SimpleAtoi(text, &seconds)) return absl::Seconds(seconds);
  absl::Duration duration;
  if (!absl::ParseDuration(text, &duration)) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", text, "\" is not a duration (e.g. 15s, 1m30s, or seconds)"));
  }
  return duration;
}

// `address` as HOST:PORT, or a bare HOST (an IPv6 literal too, as $POD_IP holds it) with the
// port of `listen`.
absl::StatusOr<std::string> WithListenPort(std::string_view address, std::string_view listen) {
  if (net::ParseHostPort(address).ok()) return std::string(address);
  const size_t colons = std::count(address.begin(), address.end(), ':');
  if (colons == 1 || address.find('[') != std::string_view::npos) {
    return net::ParseHostPort(address).status();
  }
  ASSIGN_OR_RETURN(net::HostPort listen_at, net::ParseHostPort(listen));
  return net::HostPort{std::string(address), listen_at.port}.ToString();
}

Setter StringSetter(std::string GmConfig::*field) {
  return [field](const std::string& value, GmConfig& config) {
    config.*field = value;
    return absl::OkStatus();
  };
}

Setter BoolSetter(std::function<bool&(GmConfig&)> field) {
  return [field](const std::string& value, GmConfig& config) -> absl::Status {
    ASSIGN_OR_RETURN(bool parsed, ParseBool(value));
    field(config) = parsed;
    return absl::OkStatus();
  };
}

Setter IntSetter(std::function<void(GmConfig&, int64_t)> set, int64_t min, int64_t max) {
  return [set, min, max](const std::string& value, GmConfig& config) -> absl::Status {
    ASSIGN_OR_RETURN(int64_t parsed, ParseInt(value, min, max));
    set(config, parsed);
    return absl::OkStatus();
  };
}

// Sets the duration `field` of the config section `section` (e.g. leaderElection.leaseDuration).
template <typename Section>
Setter DurationSetter(Section GmConfig::*section, absl::Duration Section::*field) {
  return [section, field](const std::string& value, GmConfig& config) -> absl::Status {
    ASSIGN_OR_RETURN(absl::Duration parsed, ParseDurationValue(value));
    (config.*section).*field = parsed;
    return absl::OkStatus();
  };
}

Setter LeaseString(std::string LeaderElectionSettings::*field) {
  return [field](const std::string& value, GmConfig& config) {
    config.leader_election.*field = value;
    return absl::OkStatus();
  };
}

Setter TlsString(std::string net::TlsOptions::*field) {
  return [field](const std::string& value, GmConfig& config) {
    config.tls.*field = value;
    return absl::OkStatus();
  };
}

struct Flag {
  bool is_bool = false;
  Setter set;
  std::string help;
};

const std::map<std::string, Flag>& Flags() {
  static const std::map<std::string, Flag> flags{
      {"kubeconfig",
       {false, StringSetter(&GmConfig::kubeconfig),
        "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)"}},
      {"listen", {false, StringSetter(&GmConfig::listen), "edge hub gRPC address (0.0.0.0:9000)"}},
      {"edge-advertise-address",
       {false, StringSetter(&GmConfig::edge_advertise_address),
        "HOST[:PORT] where nodes reach this replica's edge hub; the other replicas send nodes "
        "there while it leads (default: $POD_IP, port of --listen)"}},
      {"edge-relay",
       {true, BoolSetter([](GmConfig& c) -> bool& { return c.edge_relay; }),
        "while not the leader, relay the node streams that reach this replica to the leader "
        "(default true; false: send the nodes to the leader)"}},
      {"edge-nodes",
       {true, BoolSetter([](GmConfig& c) -> bool& { return c.edge_nodes; }),
        "keep an EdgeNode object per connected node for `kubectl get en` (default true)"}},
      {"ready-while-relaying",
       {true, BoolSetter([](GmConfig& c) -> bool& { return c.ready_while_relaying; }),
        "while not the leader, report ready while relaying to a known leader, so a Service "
        "spreads nodes over every replica (default false)"}},
      {"edge-shards",
       {true, BoolSetter([](GmConfig& c) -> bool& { return c.edge_shards; }),
        "shard node streams over the replicas: each serves the nodes hashed to it and sends the "
        "others to their owners (default false)"}},
      {"edge-moves-per-second",
       {false,
        IntSetter([](GmConfig& c, int64_t v) { c.edge_moves_per_second = v; }, 1, 100'000),
        "with --edge-shards, node streams a replica ends per second to move them to a replica "
        "that joined (100)"}},
      {"tls-ca", {false, TlsString(&net::TlsOptions::ca_file), "CA of the node certificates"}},
      {"tls-cert", {false, TlsString(&net::TlsOptions::cert_file), "GM server certificate"}},
      {"tls-key", {false, TlsString(&net::TlsOptions::key_file), "GM server key"}},
      {"insecure",
       {true, BoolSetter([](GmConfig& c) -> bool& { return c.tls.insecure; }),
        "plaintext gRPC without certificates (local experiments only)"}},
      {"http-listen",
       {false, StringSetter(&GmConfig::http_listen),
        "/healthz /readyz /metrics address (127.0.0.1:8080)"}},
      {"config", {false, StringSetter(&GmConfig::config_file), "YAML config file"}},
      {"namespace",
       {false, StringSetter(&GmConfig::ns), "namespace to watch (default: all namespaces)"}},
      {"leader-elect",
       {true, BoolSetter([](GmConfig& c) -> bool& { return c.leader_election.enabled; }),
        "leader election on a Lease (default true)"}},
      {"lease-namespace",
       {false, LeaseString(&LeaderElectionSettings::lease_namespace),
        "namespace of the Lease (default: $POD_NAMESPACE or the kubeconfig's)"}},
      {"lease-name",
       {false, LeaseString(&LeaderElectionSettings::lease_name), "Lease name (nereid-gm)"}},
      {"id",
       {false, LeaseString(&LeaderElectionSettings::identity),
        "leader-election identity (default: $POD_NAME or hostname_random)"}},
      {"lc-server",
       {false, StringSetter(&GmConfig::lc_server),
        "LC_SERVER injected into workers (http://localhost:9100)"}},
      {"kb-server",
       {false, StringSetter(&GmConfig::kb_server),
        "KB_SERVER injected into workers (http://localhost:9020)"}},
      {"storage-initializer-image",
       {false, StringSetter(&GmConfig::storage_initializer_image),
        "init container fetching s3:// models/datasets (kubeedge/sedna-storage-initializer:v0.3.0)"}},
      {"literal-s3-credentials",
       {true, BoolSetter([](GmConfig& c) -> bool& { return c.literal_s3_credentials; }),
        "copy S3 keys into worker env instead of secretKeyRef (weaker; default false)"}},
      {"secret-cache-ttl-seconds",
       {false,
        IntSetter([](GmConfig& c, int64_t v) { c.secret_cache_ttl_seconds = v; }, 0, 3600),
        "reuse a Secret read for a credentialName this long, 0 = GET it every time (30)"}},
      {"event-drain-timeout-seconds",
       {false,
        IntSetter([](GmConfig& c, int64_t v) { c.event_drain_timeout_seconds = v; }, 0, 600),
        "at shutdown, send queued Events for at most this long, then drop the rest (5)"}},
      {"min-resync-period-seconds",
       {false,
        IntSetter([](GmConfig& c, int64_t v) { c.min_resync_period_seconds = v; }, 0, 86400),
        "informer resync in [min, 2*min) seconds, 0 disables (30)"}},
      {"controller-workers",
       {false, IntSetter([](GmConfig& c, int64_t v) { c.controller_workers = int(v); }, 1, 64),
        "reconcile workers per controller (2)"}},
      {"report-workers",
       {false, IntSetter([](GmConfig& c, int64_t v) { c.report_workers = int(v); }, 1, 64),
        "threads writing edge reports to the API (4)"}},
      {"max-held-reports",
       {false,
        IntSetter([](GmConfig& c, int64_t v) { c.max_held_reports = v; }, 64, 10'000'000),
        "edge reports of all nodes the GM holds before answering RETRY (16384)"}},
      {"edge-max-pending-handshakes",
       {false,
        IntSetter([](GmConfig& c, int64_t v) { c.edge_max_pending_handshakes = v; }, 0, 1'000'000),
        "edge connections in their TLS handshake at once, the rest wait; 0 = no gate (256)"}},
      {"edge-max-connection-wait-seconds",
       {false,
        IntSetter([](GmConfig& c, int64_t v) { c.edge_max_connection_wait_seconds = v; }, 1, 600),
        "an edge connection that waited this long for its handshake is closed; the node redials "
        "(10)"}},
      {"kube-api-qps",
       {false, IntSetter([](GmConfig& c, int64_t v) { c.kube_api_qps = int(v); }, 0, 100000),
        "requests/s to the Kubernetes API, 0 = unlimited (500)"}},
      {"kube-api-burst",
       {false, IntSetter([](GmConfig& c, int64_t v) { c.kube_api_burst = int(v); }, 1, 100000),
        "burst above --kube-api-qps (1000)"}},
      {"log-level", {false, StringSetter(&GmConfig::log_level), "debug|info|warning|error"}},
  };
  return flags;
}

struct ParsedFlag {
  std::string name;
  std::string value;
};

absl::StatusOr<std::vector<ParsedFlag>> ParseArgs(const std::vector<std::string>& args,
                                                  bool* help) {
  std::vector<ParsedFlag> out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "-h" || arg == "--help" || arg == "-help") {
      *help = true;
      continue;
    }
    if (!absl::StartsWith(arg, "--") || arg.size() == 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("unexpected argument \"", arg, "\" (see --help)"));
    }
    std::string name = arg.substr(2);
    std::optional<std::string> value;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    auto it = Flags().find(name);
    if (it == Flags().end()) {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag --", name, " (see --help)"));
    }
    if (!value.has_value()) {
      if (it->second.is_bool) {
        value = "true";
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        return absl::InvalidArgumentError(absl::StrCat("flag --", name, " needs a value"));
      }
    }
    out.push_back({name, *value});
  }
  return out;
}

// ---- YAML file.

class FileLoader {
 public:
  FileLoader(std::string path, GmConfig& config, std::vector<std::string>& warnings)
      : path_(std::move(path)), config_(config), warnings_(warnings) {}

  absl::Status Load() {
    std::ifstream in(path_);
    if (!in) {
      return absl::InvalidArgumentError(
          absl::StrCat("--config ", path_, ": cannot read the file (", std::strerror(errno), ")"));
    }
    std::stringstream text;
    text << in.rdbuf();
    YAML::Node root;
    try {
      root = YAML::Load(text.str());
    } catch (const std::exception& e) {
      return absl::InvalidArgumentError(
          absl::StrCat("config file ", path_, ": not valid YAML: ", e.what()));
    }
    if (root.IsNull()) return absl::OkStatus();  // An empty file changes nothing.
    if (!root.IsMap()) {
      return absl::InvalidArgumentError(absl::StrCat("config file ", path_, ": must be a YAML map"));
    }
    for (const auto& entry : root) {
      const std::string key = entry.first.as<std::string>("");
      RETURN_IF_ERROR(TopLevel(key, entry.second));
    }
    return absl::OkStatus();
  }

 private:
  std::string Where(std::string_view key) const {
    return absl::StrCat("config file ", path_, ": key ", ToAbsl(key));
  }

  // The scalar text of `node` ("" for null); an error for maps and sequences.
  absl::StatusOr<std::string> Scalar(const YAML::Node& node, std::string_view key) const {
    if (node.IsNull()) return std::string();
    if (!node.IsScalar()) return Invalid(Where(key), "must be a scalar value");
    return node.Scalar();
  }

  absl::Status Set(const YAML::Node& node, std::string_view key, const Setter& setter) {
    ASSIGN_OR_RETURN(std::string value, Scalar(node, key));
    absl::Status status = setter(value, config_);
    if (!status.ok()) return Invalid(Where(key), ToStd(status.message()));
    return absl::OkStatus();
  }

  absl::Status Map(const YAML::Node& node, std::string_view key,
                   const std::map<std::string, Setter>& fields) {
    if (node.IsNull()) return absl::OkStatus();
    if (!node.IsMap()) return Invalid(Where(key), "must be a map");
    for (const auto& entry : node) {
      const std::string sub = entry.first.as<std::string>("");
      const std::string path = absl::StrCat(ToAbsl(key), ".", sub);
      auto it = fields.find(sub);
      if (it == fields.end()) return Invalid(Where(path), "unknown key");
      RETURN_IF_ERROR(Set(entry.second, path, it->second));
    }
    return absl::OkStatus();
  }

  absl::Status TopLevel(const std::string& key, const YAML::Node& value) {
    const auto& flags = Flags();
    static const std::map<std::string, std::string> kScalarKeys = {
        {"kubeConfig", "kubeconfig"},
        {"namespace", "namespace"},
        {"minResyncPeriodSeconds", "min-resync-period-seconds"},
        {"listen", "listen"},
        {"httpListen", "http-listen"},
        {"edgeAdvertiseAddress", "edge-advertise-address"},
        {"edgeRelay", "edge-relay"},
        {"readyWhileRelaying", "ready-while-relaying"},
        {"edgeNodes", "edge-nodes"},
        {"edgeShards", "edge-shards"},
        {"edgeMovesPerSecond", "edge-moves-per-second"},
        {"insecure", "insecure"},
        {"controllerWorkers", "controller-workers"},
        {"reportWorkers", "report-workers"},
        {"maxHeldReports", "max-held-reports"},
        {"edgeMaxPendingHandshakes", "edge-max-pending-handshakes"},
        {"edgeMaxConnectionWaitSeconds", "edge-max-connection-wait-seconds"},
        {"kubeAPIQPS", "kube-api-qps"},
        {"kubeAPIBurst", "kube-api-burst"},
        {"logLevel", "log-level"},
        {"storageInitializerImage", "storage-initializer-image"},
        {"literalS3Credentials", "literal-s3-credentials"},
        {"secretCacheTTLSeconds", "secret-cache-ttl-seconds"},
        {"eventDrainTimeoutSeconds", "event-drain-timeout-seconds"},
    };
    if (auto it = kScalarKeys.find(key); it != kScalarKeys.end()) {
      return Set(value, key, flags.at(it->second).set);
    }
    if (key == "master") {
      ASSIGN_OR_RETURN(std::string master, Scalar(value, key));
      if (!master.empty()) {
        return Invalid(Where(key),
                       "is not supported; put the API server address in the kubeconfig");
      }
      return absl::OkStatus();
    }
    if (key == "websocket") {
      warnings_.push_back(absl::StrCat(
          Where(key), " is ignored: Nereid's edge link is gRPC on `listen` (", config_.listen,
          " unless set)"));
      return absl::OkStatus();
    }
    if (key == "localController") {
      return Map(value, key, {{"server", flags.at("lc-server").set}});
    }
    if (key == "knowledgeBaseServer") {
      return Map(value, key, {{"server", flags.at("kb-server").set}});
    }
    if (key == "tls") {
      return Map(value, key,
                 {{"ca", flags.at("tls-ca").set},
                  {"cert", flags.at("tls-cert").set},
                  {"key", flags.at("tls-key").set}});
    }
    if (key == "leaderElection") {
      return Map(value, key,
                 {{"enabled", flags.at("leader-elect").set},
                  {"leaseNamespace", flags.at("lease-namespace").set},
                  {"leaseName", flags.at("lease-name").set},
                  {"id", flags.at("id").set},
                  {"leaseDuration", DurationSetter(&GmConfig::leader_election,
                                                   &LeaderElectionSettings::lease_duration)},
                  {"renewDeadline", DurationSetter(&GmConfig::leader_election,
                                                   &LeaderElectionSettings::renew_deadline)},
                  {"retryPeriod", DurationSetter(&GmConfig::leader_election,
                                                 &LeaderElectionSettings::retry_period)}});
    }
    if (key == "edgeKeepalive") {
      using net::KeepaliveOptions;
      return Map(value, key,
                 {{"time", DurationSetter(&GmConfig::edge_keepalive, &KeepaliveOptions::time)},
                  {"timeout",
                   DurationSetter(&GmConfig::edge_keepalive, &KeepaliveOptions::timeout)},
                  {"minClientPingInterval",
                   DurationSetter(&GmConfig::edge_keepalive,
                                  &KeepaliveOptions::min_client_ping_interval)}});
    }
    return Invalid(Where(key), "unknown key");
  }

  const std::string path_;
  GmConfig& config_;
  std::vector<std::string>& warnings_;
};

std::string DefaultIdentity() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') {
    std::snprintf(host, sizeof(host), "gm");
  }
  std::random_device random;
  return absl::StrFormat("%s_%08x", host, random());
}

bool IsHttpUrl(const std::string& url) {
  return (absl::StartsWith(url, "http://") && url.size() > 7) ||
         (absl::StartsWith(url, "https://") && url.size() > 8);
}

}  // namespace

EnvLookup ProcessEnv() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

absl::Status ValidateConfig(const GmConfig& config) {
  if (absl::Status s = net::ParseHostPort(config.listen).status(); !s.ok()) {
    return Invalid("--listen", ToStd(s.message()));
  }
  if (!config.edge_advertise_address.empty()) {
    if (absl::Status s = net::ParseHostPort(config.edge_advertise_address).status(); !s.ok()) {
      return Invalid("--edge-advertise-address", ToStd(s.message()));
    }
  }
  if (absl::Status s = net::ParseHostPort(config.http_listen).status(); !s.ok()) {
    return Invalid("--http-listen", ToStd(s.message()));
  }
  if (!config.tls.insecure) {
    if (config.tls.ca_file.empty() || config.tls.cert_file.empty() ||
        config.tls.key_file.empty()) {
      return absl::InvalidArgumentError(
          "the edge link needs --tls-ca, --tls-cert and --tls-key (mutual TLS); --insecure runs "
          "it in plaintext for local experiments");
    }
  } else if (!config.tls.ca_file.empty() || !config.tls.cert_file.empty() ||
             !config.tls.key_file.empty()) {
    return absl::InvalidArgumentError(
        "--insecure and --tls-* contradict each other: choose mutual TLS or plaintext");
  }
  if (!IsHttpUrl(config.lc_server)) {
    return Invalid("--lc-server (localController.server)",
                   absl::StrCat("\"", config.lc_server, "\" is not an http(s):// URL"));
  }
  if (!IsHttpUrl(config.kb_server)) {
    return Invalid("--kb-server (knowledgeBaseServer.server)",
                   absl::StrCat("\"", config.kb_server, "\" is not an http(s):// URL"));
  }
  if (config.min_resync_period_seconds < 0) {
    return Invalid("minResyncPeriodSeconds", "must be >= 0");
  }
  if (config.ready_while_relaying && (!config.edge_relay || !config.leader_election.enabled)) {
    return Invalid("--ready-while-relaying", "needs --edge-relay and leader election");
  }
  if (config.edge_shards && (!config.edge_relay || !config.leader_election.enabled)) {
    return Invalid("--edge-shards", "needs --edge-relay and leader election");
  }
  if (config.edge_shards && config.edge_advertise_address.empty()) {
    return Invalid("--edge-shards",
                   "needs the address where nodes reach this replica (--edge-advertise-address "
                   "or $POD_IP)");
  }
  if (config.controller_workers < 1) return Invalid("--controller-workers", "must be >= 1");
  if (config.report_workers < 1) return Invalid("--report-workers", "must be >= 1");
  if (!config.log_level.empty()) {
    log::Level level;
    if (!log::ParseLevel(config.log_level, &level)) {
      return Invalid("--log-level",
                     absl::StrCat("\"", config.log_level, "\" is not debug|info|warning|error"));
    }
  }
  const net::KeepaliveOptions& keepalive = config.edge_keepalive;
  if (keepalive.time < absl::Seconds(1) || keepalive.timeout < absl::Seconds(1)) {
    return Invalid("edgeKeepalive", "time and timeout must be at least 1s");
  }
  if (keepalive.min_client_ping_interval <= absl::ZeroDuration()) {
    return Invalid("edgeKeepalive.minClientPingInterval", "must be positive");
  }
  const LeaderElectionSettings& le = config.leader_election;
  if (le.enabled) {
    if (le.lease_name.empty()) return Invalid("--lease-name", "must not be empty");
    if (le.retry_period <= absl::ZeroDuration()) {
      return Invalid("leaderElection.retryPeriod", "must be positive");
    }
    if (le.renew_deadline <= le.retry_period * 1.2) {
      return Invalid("leaderElection.renewDeadline", "must be greater than 1.2 × retryPeriod");
    }
    if (le.lease_duration <= le.renew_deadline) {
      return Invalid("leaderElection.leaseDuration", "must be greater than renewDeadline");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<CommandLine> LoadConfig(const std::vector<std::string>& args,
                                       const EnvLookup& env) {
  CommandLine out;
  ASSIGN_OR_RETURN(std::vector<ParsedFlag> flags, ParseArgs(args, &out.help));
  if (out.help) return out;

  // 1. The file named by --config (the last one wins, as for every flag).
  std::string config_file;
  for (const ParsedFlag& flag : flags) {
    if (flag.name == "config") config_file = flag.value;
  }
  if (!config_file.empty()) {
    FileLoader loader(config_file, out.config, out.warnings);
    RETURN_IF_ERROR(loader.Load());
  }
  // 2. Environment.
  if (std::optional<std::string> pod = env("POD_NAME"); pod.has_value() && !pod->empty()) {
    out.config.leader_election.identity = *pod;
  }
  if (std::optional<std::string> ns = env("POD_NAMESPACE"); ns.has_value() && !ns->empty()) {
    out.config.leader_election.lease_namespace = *ns;
  }
  if (std::optional<std::string> ip = env("POD_IP"); ip.has_value() && !ip->empty()) {
    out.config.edge_advertise_address = *ip;
  }
  // 3. Flags, in order.
  for (const ParsedFlag& flag : flags) {
    absl::Status status = Flags().at(flag.name).set(flag.value, out.config);
    if (!status.ok()) return Invalid(absl::StrCat("--", flag.name), ToStd(status.message()));
  }
  out.config.config_file = config_file;
  if (out.config.leader_election.identity.empty()) {
    out.config.leader_election.identity = DefaultIdentity();
  }
  if (!out.config.edge_advertise_address.empty()) {
    absl::StatusOr<std::string> advertise =
        WithListenPort(out.config.edge_advertise_address, out.config.listen);
    if (!advertise.ok()) {
      return Invalid("--edge-advertise-address", ToStd(advertise.status().message()));
    }
    out.config.edge_advertise_address = *std::move(advertise);
  }
  RETURN_IF_ERROR(ValidateConfig(out.config));
  return out;
}

void PrintUsage(std::ostream& out) {
  out << "usage: globalmanager --kubeconfig FILE --listen ADDR:PORT --tls-ca F --tls-cert F "
         "--tls-key F\n"
         "                     [--insecure] [--http-listen 127.0.0.1:PORT] [--config FILE]\n"
         "                     [--namespace NS] [--leader-elect=true|false] "
         "[--lease-namespace NS]\n"
         "                     [--lease-name NAME] [--id ID]\n\n"
         "Settings: defaults < --config YAML file < environment (POD_NAME, POD_NAMESPACE) < "
         "flags.\n\nflags:\n";
  for (const auto& [name, flag] : Flags()) {
    out << "  --" << name << (flag.is_bool ? "[=true|false]" : " VALUE") << "\n      "
        << flag.help << "\n";
  }
}

}  // namespace nereid::gm
