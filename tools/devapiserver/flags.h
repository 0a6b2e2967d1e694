#pragma once

// devapiserver's command line, parsed into a Config (main.cc stays thin) by the configuration layer
// (common/config/option_set.h); a new flag is a field here and one line in flags.cc.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/config/option_set.h"

namespace nereid::devapi {

struct Config {
  std::string host = "127.0.0.1";
  int port = 0;
  std::string data_file;
  std::string kubeconfig_out;
  std::string tls_cert;
  std::string tls_key;
  std::string tls_ca;
  bool allow_non_loopback = false;
  bool debug_faults = false;
  size_t watch_history = 10000;
  absl::Duration bookmark_interval = absl::Seconds(15);
  absl::Duration heartbeat_interval = absl::Seconds(15);
  absl::Duration max_watch_timeout = absl::Minutes(30);
  absl::Duration event_ttl = absl::Hours(1);
  size_t threads = 64;
  std::string log_level;
  bool help = false;
  bool version = false;
  std::vector<std::string> warnings;  // deprecated forms used: for stderr
};

// Every flag, bound to the fields of `config` (whose values are the defaults --help shows).
config::OptionSet RegisterOptions(Config& config);
std::string Usage();
// Errors are InvalidArgument with a message fit for stderr.
absl::StatusOr<Config> ParseFlags(const std::vector<std::string>& args);
bool IsLoopback(const std::string& host);

}  // namespace nereid::devapi
