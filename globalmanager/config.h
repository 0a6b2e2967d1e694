#pragma once

// GlobalManager configuration: defaults < YAML file (--config) < environment < flags, all read by
// the one configuration layer (common/config/option_set.h). `globalmanager --help` lists every
// flag with its default, environment variable and file key; --version prints the release.
//
// Kubernetes API: --kubeconfig, else $KUBECONFIG, else the in-cluster service account, else
// ~/.kube/config (common/kube/config.h). In a pod, give no kubeconfig.
//
// YAML file: Sedna's GM config keys (docs/sedna-compatibility.md) so an existing gm.yaml loads —
//   kubeConfig, namespace, localController: {server}, knowledgeBaseServer: {server},
//   minResyncPeriodSeconds; `master` must be empty (put the server in the kubeconfig) and
//   `websocket` is accepted and ignored with a warning (Nereid's edge link is gRPC on `listen`) —
// plus Nereid's (leaderElection: {...} and the like are maps; see --help for every key).
// Unknown keys are refused, so a typo is not silently ignored.
// Durations everywhere: a number with a unit ("15s", "5m", "1h", "1m30s"); a bare number is still
// read as seconds, with a warning.
//
// Environment (as a Deployment sets it from the downward API): POD_NAME → the leader-election
// identity, POD_NAMESPACE → the Lease's namespace, POD_IP → the edge advertise address.
//
// Adding a setting is one place: a field with its default in GmConfig below, and one line in
// RegisterOptions (config.cc), e.g.
//   options.Add("fleet-status", &c.fleet_status, "what it does").Yaml("fleetStatus");
// (typed overloads for string, bool, integers with a range, absl::Duration; AddSeconds for a
// duration kept as int64 seconds). Checks that involve several settings go in ValidateConfig.
// Renaming a flag: .DeprecatedFlag("old-name") / .DeprecatedYaml("oldKey") keep the old spelling
// working with a warning.

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/config/option_set.h"
#include "common/net/keepalive.h"
#include "common/net/tls.h"

namespace nereid::gm {

struct LeaderElectionSettings {
  bool enabled = true;
  // "" → $POD_NAMESPACE, else the kubeconfig's namespace (the pod's own when in-cluster).
  std::string lease_namespace;
  std::string lease_name = "nereid-gm";
  // "" → $POD_NAME, else "<hostname>_<random>" (client-go's choice: unique per process).
  std::string identity;
  // controller-runtime's defaults (15 s lease, 10 s renew deadline, 2 s retry).
  absl::Duration lease_duration = absl::Seconds(15);
  absl::Duration renew_deadline = absl::Seconds(10);
  absl::Duration retry_period = absl::Seconds(2);
};

struct GmConfig {
  std::string kubeconfig;  // "" = $KUBECONFIG / in-cluster / ~/.kube/config
  std::string ns;          // namespace to watch; "" = all namespaces
  std::string listen = "0.0.0.0:9000";  // edge hub (gRPC); Sedna's GM listens on 9000
  // Where nodes reach this replica's edge hub directly (HOST:PORT, or HOST with the port of
  // `listen`): written into the leader Lease while this replica leads, so the other replicas send
  // a node they refuse there. "" = $POD_IP with the port of `listen`, else none (refused nodes
  // retry the address they were given).
  std::string edge_advertise_address;
  // A replica that does not lead relays the node streams that reach it to the leader's edge hub
  // (edgehub/edge_relay.h) instead of refusing them. Needs a GM certificate usable as a client
  // certificate too (extendedKeyUsage clientAuth); without, nodes are sent to the leader.
  bool edge_relay = true;
  // A replica that does not lead reports ready (/readyz 200) while it relays to a known leader, so
  // a Service over the replicas spreads node connections over all of them (the leader's cost per
  // node falls to a fifth for those relayed; a standby's restart then reconnects its nodes).
  // Needs edge_relay and leader election.
  bool ready_while_relaying = false;
  // Edge streams sharded over the replicas (edge_shards.h): each replica holds a Lease of its own
  // and serves the nodes that rendezvous hashing gives it (relaying them while it does not lead),
  // sending the others to their owners; when a replica joins, its nodes move to it at
  // edge_moves_per_second at most. Needs edge_relay, leader election and an edge address.
  bool edge_shards = false;
  int64_t edge_moves_per_second = 100;
  // The leader keeps an EdgeNode object per connected node (`kubectl get en`, globalmanager/fleet).
  bool edge_nodes = true;
  net::TlsOptions tls;
  // /healthz /readyz /metrics. Loopback by default; a Deployment whose kubelet probes the pod IP
  // sets 0.0.0.0:8080.
  std::string http_listen = "127.0.0.1:8080";
  // Injected into workers as LC_SERVER / KB_SERVER (Sedna's localController.server and
  // knowledgeBaseServer.server).
  std::string lc_server = "http://localhost:9100";
  std::string kb_server = "http://localhost:9020";
  // Sedna's storage-initializer image for workers with s3:// models or datasets.
  std::string storage_initializer_image = "kubeedge/sedna-storage-initializer:v0.3.0";
  // Literal S3 keys in worker env instead of valueFrom.secretKeyRef. Weaker (the keys then sit in
  // Pod and Deployment specs, readable by anyone who may get pods); only for edge runtimes that
  // cannot resolve Secret references.
  bool literal_s3_credentials = false;
  // How long a Secret read for an object's credentialName is reused (secret_cache.h); 0 = every
  // reconcile GETs it.
  int64_t secret_cache_ttl_seconds = 30;
  // At shutdown, queued Events are sent (through the API rate limiter) for at most this long, then
  // dropped and counted: inside the Pod's terminationGracePeriodSeconds (30) with the edge hub's
  // grace (5 s) and the rest of the stop.
  int64_t event_drain_timeout_seconds = 5;
  // Informer resync period: a random value in [min, 2·min) as Sedna's genResyncPeriod; 0 disables.
  int64_t min_resync_period_seconds = 30;
  LeaderElectionSettings leader_election;
  // HTTP/2 pings on the edge streams: a node whose link went silent is dropped after time +
  // timeout; LCs may ping as often as minClientPingInterval (their keepaliveTime must not be
  // shorter, or the GM answers GOAWAY too_many_pings).
  net::KeepaliveOptions edge_keepalive;
  int controller_workers = 2;  // reconcile workers per controller
  int report_workers = 4;      // threads writing edge reports to the Kubernetes API
  // Edge reports of all nodes held (waiting or being written); beyond it, or beyond a node's fair
  // share of it, a report is answered RETRY and stays in the LC's outbox.
  int64_t max_held_reports = 16'384;
  // Edge connections in their TLS handshake at once; the rest wait their turn, and one that waited
  // longer than edge_max_connection_wait_seconds, or whose node hung up, is closed unhandshaken
  // (globalmanager/edgehub/connection_gate.h). 0: gRPC's own listener, which handshakes every
  // connection at once.
  int64_t edge_max_pending_handshakes = 256;
  int64_t edge_max_connection_wait_seconds = 10;
  // Client-side rate limit towards the Kubernetes API (0 = none). Status writes from edge reports
  // dominate; at RestClient's 50 qps a 1,000-node fleet's reports queue for minutes
  // (bench/RESULTS.md, GM fan-out). The API server's own priority and fairness still applies.
  int kube_api_qps = 500;
  int kube_api_burst = 1000;
  std::string log_level;       // "" = NEREID_LOG_LEVEL or info
  std::string config_file;     // where the file layer came from, for messages
};

using config::EnvLookup;
inline EnvLookup ProcessEnv() { return config::ProcessEnv(); }

struct CommandLine {
  bool help = false;     // --help/-h: print PrintUsage and exit
  bool version = false;  // --version: print the version line and exit
  GmConfig config;
  // Deprecated spellings used and settings accepted but not used (e.g. Sedna's `websocket`); the
  // daemon logs them at start (stderr).
  std::vector<std::string> warnings;
};

// Every setting of the GM, bound to the fields of `config` (whose values are the defaults --help
// shows). LoadConfig reads the sources through it; tests list its options.
config::OptionSet RegisterOptions(GmConfig& config);

// Builds and validates the configuration from `args` (without the program name). InvalidArgument
// names the flag, variable or file key at fault; with --help or --version nothing else is read.
absl::StatusOr<CommandLine> LoadConfig(const std::vector<std::string>& args, const EnvLookup& env);

// The checks LoadConfig applies last: TLS files or --insecure, listen addresses, URLs, positive
// worker counts, lease timings (lease > renew deadline > 1.2 × retry period).
absl::Status ValidateConfig(const GmConfig& config);

void PrintUsage(std::ostream& out);

}  // namespace nereid::gm
