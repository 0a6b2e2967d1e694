#include "globalmanager/config.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/log/log.h"
#include "common/net/host_port.h"
#include "common/status/macros.h"
#include "common/strings/absl_compat.h"

namespace nereid::gm {
namespace {

absl::Status Invalid(std::string_view where, std::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(ToAbsl(where), ": ", ToAbsl(message)));
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

config::OptionSet RegisterOptions(GmConfig& c) {
  using config::ValueIn;
  config::OptionSet options(
      "globalmanager",
      "usage: globalmanager --tls-ca F --tls-cert F --tls-key F [flags]   (or --insecure)",
      "The Nereid GlobalManager: reconciles Sedna's resources and serves the edge nodes' gRPC\n"
      "link.\n"
      "Settings: defaults < --config YAML file < environment < flags. Durations: 30s, 5m, 1h.\n");
  options.AddConfigFile("config", &c.config_file, "YAML config file (Sedna's gm.yaml keys too)");
  options.Add("kubeconfig", &c.kubeconfig,
              "kubeconfig file (empty: $KUBECONFIG, in-cluster, ~/.kube/config)")
      .Yaml("kubeConfig");
  options.Add("namespace", &c.ns, "namespace to watch (empty: all namespaces)").Yaml("namespace");
  options.Add("listen", &c.listen, "edge hub gRPC address").Yaml("listen");
  options.Add("edge-advertise-address", &c.edge_advertise_address,
              "HOST[:PORT] where nodes reach this replica's edge hub; the other replicas send "
              "nodes there while it leads (port: that of --listen)")
      .Yaml("edgeAdvertiseAddress")
      .Env("POD_IP");
  options.Add("edge-relay", &c.edge_relay,
              "while not the leader, relay the node streams that reach this replica to the "
              "leader (false: send the nodes to the leader)")
      .Yaml("edgeRelay");
  options.Add("edge-nodes", &c.edge_nodes,
              "keep an EdgeNode object per connected node for `kubectl get en`")
      .Yaml("edgeNodes");
  options.Add("ready-while-relaying", &c.ready_while_relaying,
              "while not the leader, report ready while relaying to a known leader, so a Service "
              "spreads nodes over every replica")
      .Yaml("readyWhileRelaying");
  options.Add("edge-shards", &c.edge_shards,
              "shard node streams over the replicas: each serves the nodes hashed to it and sends "
              "the others to their owners")
      .Yaml("edgeShards");
  options.Add("edge-moves-per-second", &c.edge_moves_per_second,
              "with --edge-shards, node streams a replica ends per second to move them to a "
              "replica that joined", 1, 100'000)
      .Yaml("edgeMovesPerSecond");
  options.Add("tls-ca", &c.tls.ca_file, "CA of the node certificates").Yaml("tls.ca");
  options.Add("tls-cert", &c.tls.cert_file, "GM server certificate").Yaml("tls.cert");
  options.Add("tls-key", &c.tls.key_file, "GM server key").Yaml("tls.key");
  options.Add("insecure", &c.tls.insecure,
              "plaintext gRPC without certificates (local experiments only)")
      .Yaml("insecure");
  options.Add("http-listen", &c.http_listen, "/healthz /readyz /metrics address")
      .Yaml("httpListen");
  LeaderElectionSettings& le = c.leader_election;
  options.Add("leader-elect", &le.enabled, "leader election on a Lease")
      .Yaml("leaderElection.enabled");
  options.Add("lease-namespace", &le.lease_namespace,
              "namespace of the Lease (empty: the kubeconfig's)")
      .Yaml("leaderElection.leaseNamespace")
      .Env("POD_NAMESPACE");
  options.Add("lease-name", &le.lease_name, "Lease name").Yaml("leaderElection.leaseName");
  options.Add("id", &le.identity, "leader-election identity (empty: hostname_random)")
      .Yaml("leaderElection.id")
      .Env("POD_NAME");
  options.Add("lease-duration", &le.lease_duration, "how long a Lease holds without renewal")
      .Yaml("leaderElection.leaseDuration");
  options.Add("renew-deadline", &le.renew_deadline,
              "the leader steps down when it could not renew for this long")
      .Yaml("leaderElection.renewDeadline");
  options.Add("retry-period", &le.retry_period, "interval of Lease acquire/renew attempts")
      .Yaml("leaderElection.retryPeriod");
  options.Add("edge-keepalive-time", &c.edge_keepalive.time,
              "HTTP/2 ping interval on a silent edge stream")
      .Yaml("edgeKeepalive.time");
  options.Add("edge-keepalive-timeout", &c.edge_keepalive.timeout,
              "a node whose ping is unanswered this long is dropped")
      .Yaml("edgeKeepalive.timeout");
  options.Add("edge-min-client-ping-interval", &c.edge_keepalive.min_client_ping_interval,
              "shortest ping interval LCs may use (more often: GOAWAY too_many_pings)")
      .Yaml("edgeKeepalive.minClientPingInterval");
  options.Add("lc-server", &c.lc_server, "LC_SERVER injected into workers")
      .Yaml("localController.server");
  options.Add("kb-server", &c.kb_server, "KB_SERVER injected into workers")
      .Yaml("knowledgeBaseServer.server");
  options.Add("storage-initializer-image", &c.storage_initializer_image,
              "init container fetching s3:// models/datasets")
      .Yaml("storageInitializerImage");
  options.Add("literal-s3-credentials", &c.literal_s3_credentials,
              "copy S3 keys into worker env instead of secretKeyRef (weaker)")
      .Yaml("literalS3Credentials");
  options.AddSeconds("secret-cache-ttl", &c.secret_cache_ttl_seconds,
                     "reuse a Secret read for a credentialName this long, 0s = GET it every time",
                     0, 3600)
      .Yaml("secretCacheTTL")
      .DeprecatedFlag("secret-cache-ttl-seconds", ValueIn::kSeconds)
      .DeprecatedYaml("secretCacheTTLSeconds", ValueIn::kSeconds);
  options.AddSeconds("event-drain-timeout", &c.event_drain_timeout_seconds,
                     "at shutdown, send queued Events for at most this long, then drop the rest",
                     0, 600)
      .Yaml("eventDrainTimeout")
      .DeprecatedFlag("event-drain-timeout-seconds", ValueIn::kSeconds)
      .DeprecatedYaml("eventDrainTimeoutSeconds", ValueIn::kSeconds);
  // Sedna's gm.yaml key is minResyncPeriodSeconds (integer seconds): current, not deprecated.
  options.AddSeconds("min-resync-period", &c.min_resync_period_seconds,
                     "informer resync in [min, 2*min), 0s disables", 0, 86400)
      .Yaml("minResyncPeriodSeconds", ValueIn::kSeconds)
      .DeprecatedFlag("min-resync-period-seconds", ValueIn::kSeconds);
  options.Add("controller-workers", &c.controller_workers, "reconcile workers per controller", 1,
              64)
      .Yaml("controllerWorkers");
  options.Add("report-workers", &c.report_workers, "threads writing edge reports to the API", 1,
              64)
      .Yaml("reportWorkers");
  options.Add("max-held-reports", &c.max_held_reports,
              "edge reports of all nodes the GM holds before answering RETRY", 64, 10'000'000)
      .Yaml("maxHeldReports");
  options.Add("edge-max-pending-handshakes", &c.edge_max_pending_handshakes,
              "edge connections in their TLS handshake at once, the rest wait; 0 = no gate", 0,
              1'000'000)
      .Yaml("edgeMaxPendingHandshakes");
  options.AddSeconds("edge-max-connection-wait", &c.edge_max_connection_wait_seconds,
                     "an edge connection that waited this long for its handshake is closed; the "
                     "node redials",
                     1, 600)
      .Yaml("edgeMaxConnectionWait")
      .DeprecatedFlag("edge-max-connection-wait-seconds", ValueIn::kSeconds)
      .DeprecatedYaml("edgeMaxConnectionWaitSeconds", ValueIn::kSeconds);
  options.Add("kube-api-qps", &c.kube_api_qps,
              "requests/s to the Kubernetes API, 0 = unlimited", 0, 100'000)
      .Yaml("kubeAPIQPS");
  options.Add("kube-api-burst", &c.kube_api_burst, "burst above --kube-api-qps", 1, 100'000)
      .Yaml("kubeAPIBurst");
  options.Add("log-level", &c.log_level,
              "debug|info|warning|error (empty: $NEREID_LOG_LEVEL or info)")
      .Yaml("logLevel");
  // Sedna's gm.yaml: `master` must be empty (the server goes in the kubeconfig); `websocket` is
  // Sedna's edge link, which Nereid serves as gRPC on `listen`.
  options.AddYaml("master", [](std::string_view value, std::string*) {
    if (value.empty()) return absl::OkStatus();
    return absl::InvalidArgumentError(
        "is not supported; put the API server address in the kubeconfig");
  });
  options.IgnoreYaml("websocket", "Nereid's edge link is gRPC on `listen`");
  return options;
}

absl::StatusOr<CommandLine> LoadConfig(const std::vector<std::string>& args,
                                       const EnvLookup& env) {
  CommandLine out;
  config::OptionSet options = RegisterOptions(out.config);
  ASSIGN_OR_RETURN(config::OptionSet::Loaded loaded, options.Load(args, env));
  out.help = loaded.help;
  out.version = loaded.version;
  out.warnings = std::move(loaded.warnings);
  if (out.help || out.version) return out;
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
  GmConfig defaults;
  out << RegisterOptions(defaults).Help();
}

}  // namespace nereid::gm
