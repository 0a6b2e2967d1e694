#pragma once

// LocalController configuration: defaults < YAML file (--config) < environment < flags, all read
// by the one configuration layer (common/config/option_set.h). `localcontroller --help` lists
// every flag with its default, environment variable and file key; --version prints the release.
//
// Environment, as Sedna's LC DaemonSet sets it (docs/sedna-compatibility.md):
//   NODENAME          --node
//   GM_ADDRESS        --gm ("gm.sedna:9000")
//   BIND_PORT         the port of --listen; the host stays what the file/default says
//                     (127.0.0.1: Sedna's workers run with hostNetwork and LC_SERVER=
//                     http://localhost:9100, so loopback is enough and nothing else can post)
//   ROOTFS_MOUNT_DIR  --host-root ("/rootfs")
//
// YAML file keys: the flags' names in camelCase (node, gm, hostRoot, scanPeriod, tls: {ca, cert,
// key}, ...; --help shows each). Unknown keys are refused, so a typo is not silently ignored.
// Durations everywhere: a number with a unit ("90s", "1m30s", "1h"); a bare number is still read
// as seconds, with a warning.
//
// Default database: <host-root>/var/lib/nereid/lc.db (on the host's disk under Sedna's mount, like
// Sedna's /var/lib/sedna/database.db).
//
// Adding a setting is one place: a field with its default in LcConfig below, and one line in
// RegisterOptions (config.cc), e.g.
//   options.Add("metrics-listen", &c.metrics_listen, "what it does").Yaml("metricsListen");
// (typed overloads for string, bool, integers with a range, absl::Duration). A list-valued
// setting (e.g. several data roots) is an AddCustom whose parser splits on ','. Checks go in
// ValidateConfig.

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/config/option_set.h"
#include "common/net/tls.h"

namespace nereid::lc {

struct LcConfig {
  std::string node_name;
  std::string gm_address;
  std::string db_path;
  std::string host_root = "/rootfs";
  // Host directories (under host_root) that dataset/model urls, outputDirs and the hot-update
  // directory must lie in (dataset/data_roots.h); empty: the whole host root.
  std::vector<std::string> data_roots;
  std::string listen = "127.0.0.1:9100";
  // A second listener serving only GET /metrics ("" = none: /metrics is on `listen` alone). The
  // only way to let a Prometheus off the node scrape the LC without opening its REST API.
  std::string metrics_listen;
  net::TlsOptions tls;
  absl::Duration scan_period = absl::Seconds(60);
  absl::Duration model_check_period = absl::Seconds(60);
  absl::Duration model_http_check_period = absl::Hours(1);
  // HTTP/2 pings on the link to the GM: a silent link (NAT drop, blackhole) is declared dead
  // after keepalive_time + keepalive_timeout and redialled (common/net/keepalive.h). The GM must
  // permit pings this often (its edgeKeepalive.minClientPingInterval).
  absl::Duration keepalive_time = absl::Seconds(30);
  absl::Duration keepalive_timeout = absl::Seconds(10);
  size_t max_request_bytes = 1 << 20;
  int http_threads = 4;
  // REST connections open at once. They wait in epoll, not on the threads, so slow clients cost
  // about 1 KiB each until the limit; the daemon raises its open-file limit to fit.
  int64_t http_max_connections = 4096;
  // S3 (datasets and models with s3:// urls): a CA bundle for https endpoints ("" = the system's)
  // and the addressing style (auto: virtual-host for *.amazonaws.com, path-style elsewhere).
  std::string s3_ca_file;
  std::string s3_addressing = "auto";
  std::string log_level;    // "" = NEREID_LOG_LEVEL or info
  std::string config_file;  // where the file layer came from, for messages
};

using config::EnvLookup;
inline EnvLookup ProcessEnv() { return config::ProcessEnv(); }

struct CommandLine {
  bool help = false;     // --help/-h: print PrintDaemonUsage and exit
  bool version = false;  // --version: print the version line and exit
  LcConfig config;
  std::vector<std::string> warnings;  // deprecated spellings used: for stderr
};

// Every setting of the LC daemon, bound to the fields of `config` (whose values are the defaults
// --help shows). LoadConfig reads the sources through it; tests list its options.
config::OptionSet RegisterOptions(LcConfig& config);

// Builds and validates the configuration from `args` (without the program name). InvalidArgument
// names the flag, variable or file key at fault; with --help or --version nothing else is read.
absl::StatusOr<CommandLine> LoadConfig(const std::vector<std::string>& args, const EnvLookup& env);

// The checks LoadConfig applies last (node, GM address, TLS files or --insecure, listen address,
// positive periods, limits).
absl::Status ValidateConfig(const LcConfig& config);

void PrintDaemonUsage(std::ostream& out);

}  // namespace nereid::lc
