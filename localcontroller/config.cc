#include "localcontroller/config.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "common/log/log.h"
#include "common/net/host_port.h"
#include "common/s3/s3_url.h"
#include "common/status/macros.h"
#include "common/strings/absl_compat.h"
#include "yaml-cpp/yaml.h"

namespace nereid::lc {
namespace {

// One source of settings; unset fields leave the lower layers' values alone.
struct Layer {
  std::optional<std::string> node_name, gm_address, db_path, host_root, listen, metrics_listen,
      tls_ca, tls_cert, tls_key, log_level, s3_ca_file, s3_addressing;
  std::optional<bool> insecure;
  std::optional<absl::Duration> scan_period, model_check_period, model_http_check_period,
      keepalive_time, keepalive_timeout;
  std::optional<size_t> max_request_bytes;
  std::optional<int> http_threads;
  std::optional<int64_t> http_max_connections;
  std::optional<int> bind_port;  // env BIND_PORT: replaces only the port of `listen`
};

absl::Status Apply(const Layer& layer, const std::string& source, LcConfig& config) {
  auto set = [](const auto& from, auto& to) {
    if (from.has_value()) to = *from;
  };
  set(layer.node_name, config.node_name);
  set(layer.gm_address, config.gm_address);
  set(layer.db_path, config.db_path);
  set(layer.host_root, config.host_root);
  set(layer.listen, config.listen);
  set(layer.metrics_listen, config.metrics_listen);
  set(layer.tls_ca, config.tls.ca_file);
  set(layer.tls_cert, config.tls.cert_file);
  set(layer.tls_key, config.tls.key_file);
  set(layer.insecure, config.tls.insecure);
  set(layer.log_level, config.log_level);
  set(layer.scan_period, config.scan_period);
  set(layer.model_check_period, config.model_check_period);
  set(layer.model_http_check_period, config.model_http_check_period);
  set(layer.keepalive_time, config.keepalive_time);
  set(layer.keepalive_timeout, config.keepalive_timeout);
  set(layer.max_request_bytes, config.max_request_bytes);
  set(layer.http_threads, config.http_threads);
  set(layer.http_max_connections, config.http_max_connections);
  set(layer.s3_ca_file, config.s3_ca_file);
  set(layer.s3_addressing, config.s3_addressing);
  if (layer.bind_port.has_value()) {
    absl::StatusOr<net::HostPort> address =
        net::ParseHostPort(config.listen, net::kAllInterfaces);
    if (!address.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, " BIND_PORT: cannot apply to ", address.status().message()));
    }
    address->port = *layer.bind_port;
    config.listen = address->ToString();
  }
  return absl::OkStatus();
}

absl::StatusOr<absl::Duration> ParseDurationText(std::string_view text, std::string_view what) {
  absl::Duration d;
  int64_t seconds = 0;
  if (absl::SimpleAtoi(ToAbsl(text), &seconds)) return absl::Seconds(seconds);
  if (!absl::ParseDuration(ToAbsl(text), &d) || d == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        ToAbsl(what), ": \"", ToAbsl(text), "\" is not a duration (e.g. 60s, 1m30s, 1h)"));
  }
  return d;
}

absl::StatusOr<int64_t> ParseIntText(std::string_view text, std::string_view what) {
  int64_t value = 0;
  if (!absl::SimpleAtoi(ToAbsl(text), &value)) {
    return absl::InvalidArgumentError(
        absl::StrCat(ToAbsl(what), ": \"", ToAbsl(text), "\" is not an integer"));
  }
  return value;
}

absl::StatusOr<bool> ParseBoolText(std::string_view text, std::string_view what) {
  bool value = false;
  if (!absl::SimpleAtob(ToAbsl(text), &value)) {
    return absl::InvalidArgumentError(
        absl::StrCat(ToAbsl(what), ": \"", ToAbsl(text), "\" is not true or false"));
  }
  return value;
}

// Sets a field of `layer` from a textual value; `what` names the source in errors.
using Setter = std::function<absl::Status(Layer&, std::string_view value, std::string_view what)>;

Setter StringSetter(std::optional<std::string> Layer::*field) {
  return [field](Layer& layer, std::string_view value, std::string_view) {
    layer.*field = std::string(value);
    return absl::OkStatus();
  };
}
Setter DurationSetter(std::optional<absl::Duration> Layer::*field) {
  return [field](Layer& layer, std::string_view value, std::string_view what) -> absl::Status {
    ASSIGN_OR_RETURN(layer.*field, ParseDurationText(value, what));
    return absl::OkStatus();
  };
}

struct FlagSpec {
  Setter set;
  bool is_bool = false;
};

const std::map<std::string, FlagSpec>& Flags() {
  static const std::map<std::string, FlagSpec> flags = {
      {"node", {StringSetter(&Layer::node_name)}},
      {"gm", {StringSetter(&Layer::gm_address)}},
      {"db", {StringSetter(&Layer::db_path)}},
      {"host-root", {StringSetter(&Layer::host_root)}},
      {"listen", {StringSetter(&Layer::listen)}},
      {"metrics-listen", {StringSetter(&Layer::metrics_listen)}},
      {"tls-ca", {StringSetter(&Layer::tls_ca)}},
      {"tls-cert", {StringSetter(&Layer::tls_cert)}},
      {"tls-key", {StringSetter(&Layer::tls_key)}},
      {"log-level", {StringSetter(&Layer::log_level)}},
      {"s3-ca", {StringSetter(&Layer::s3_ca_file)}},
      {"s3-addressing", {StringSetter(&Layer::s3_addressing)}},
      {"scan-period", {DurationSetter(&Layer::scan_period)}},
      {"model-check-period", {DurationSetter(&Layer::model_check_period)}},
      {"model-http-check-period", {DurationSetter(&Layer::model_http_check_period)}},
      {"keepalive-time", {DurationSetter(&Layer::keepalive_time)}},
      {"keepalive-timeout", {DurationSetter(&Layer::keepalive_timeout)}},
      {"max-request-bytes",
       {[](Layer& layer, std::string_view value, std::string_view what) -> absl::Status {
         ASSIGN_OR_RETURN(int64_t n, ParseIntText(value, what));
         if (n < 0) return absl::InvalidArgumentError(absl::StrCat(ToAbsl(what), ": must be >= 0"));
         layer.max_request_bytes = static_cast<size_t>(n);
         return absl::OkStatus();
       }}},
      {"http-threads",
       {[](Layer& layer, std::string_view value, std::string_view what) -> absl::Status {
         ASSIGN_OR_RETURN(int64_t n, ParseIntText(value, what));
         layer.http_threads = static_cast<int>(std::clamp<int64_t>(n, -1, 1 << 20));
         return absl::OkStatus();
       }}},
      {"http-max-connections",
       {[](Layer& layer, std::string_view value, std::string_view what) -> absl::Status {
         ASSIGN_OR_RETURN(layer.http_max_connections, ParseIntText(value, what));
         return absl::OkStatus();
       }}},
      {"insecure",
       {[](Layer& layer, std::string_view value, std::string_view what) -> absl::Status {
          ASSIGN_OR_RETURN(layer.insecure, ParseBoolText(value, what));
          return absl::OkStatus();
        },
        /*is_bool=*/true}},
  };
  return flags;
}

struct FlagResult {
  Layer layer;
  std::optional<std::string> config_file;
  bool help = false;
};

absl::StatusOr<FlagResult> ParseFlags(const std::vector<std::string>& args) {
  FlagResult result;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      result.help = true;
      continue;
    }
    if (!absl::StartsWith(arg, "--") || arg.size() == 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("unexpected argument \"", arg, "\" (flags look like --name value)"));
    }
    std::string name = arg.substr(2);
    std::optional<std::string> value;
    if (const size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
    }
    const bool is_config = name == "config";
    auto it = Flags().find(name);
    if (!is_config && it == Flags().end()) {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag --", name, " (see --help)"));
    }
    const bool is_bool = !is_config && it->second.is_bool;
    if (!value.has_value()) {
      if (is_bool) {
        value = "true";
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        return absl::InvalidArgumentError(absl::StrCat("flag --", name, " needs a value"));
      }
    }
    if (is_config) {
      result.config_file = *value;
      continue;
    }
    RETURN_IF_ERROR(it->second.set(result.layer, *value, absl::StrCat("--", name)));
  }
  return result;
}

absl::StatusOr<Layer> LoadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return absl::InvalidArgumentError(
        absl::StrCat("config file ", path, ": cannot be read (", std::strerror(errno), ")"));
  }
  std::stringstream text;
  text << in.rdbuf();
  YAML::Node root;
  try {
    root = YAML::Load(text.str());
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("config file ", path, ": ", e.what()));
  }
  Layer layer;
  if (root.IsNull()) return layer;
  if (!root.IsMap()) {
    return absl::InvalidArgumentError(absl::StrCat("config file ", path, ": must be a YAML map"));
  }
  // YAML key -> flag name (the flag's setter does the parsing).
  static const std::map<std::string, std::string> keys = {
      {"node", "node"},
      {"gm", "gm"},
      {"db", "db"},
      {"hostRoot", "host-root"},
      {"listen", "listen"},
      {"metricsListen", "metrics-listen"},
      {"insecure", "insecure"},
      {"scanPeriod", "scan-period"},
      {"modelCheckPeriod", "model-check-period"},
      {"modelHttpCheckPeriod", "model-http-check-period"},
      {"keepaliveTime", "keepalive-time"},
      {"keepaliveTimeout", "keepalive-timeout"},
      {"maxRequestBytes", "max-request-bytes"},
      {"httpThreads", "http-threads"},
      {"httpMaxConnections", "http-max-connections"},
      {"logLevel", "log-level"},
      {"s3Ca", "s3-ca"},
      {"s3Addressing", "s3-addressing"},
  };
  auto scalar = [&path](const YAML::Node& node, const std::string& key) -> absl::StatusOr<std::string> {
    if (!node.IsScalar()) {
      return absl::InvalidArgumentError(
          absl::StrCat("config file ", path, ": ", key, " must be a scalar value"));
    }
    return node.Scalar();
  };
  for (const auto& entry : root) {
    const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : "";
    const std::string what = absl::StrCat("config file ", path, ": ", key);
    if (key == "tls") {
      if (!entry.second.IsMap()) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, " must be a map with ca, cert, key"));
      }
      for (const auto& tls : entry.second) {
        const std::string sub = tls.first.IsScalar() ? tls.first.Scalar() : "";
        std::optional<std::string> Layer::*field = sub == "ca"     ? &Layer::tls_ca
                                                   : sub == "cert" ? &Layer::tls_cert
                                                   : sub == "key"  ? &Layer::tls_key
                                                                   : nullptr;
        if (field == nullptr) {
          return absl::InvalidArgumentError(
              absl::StrCat(what, ": unknown key \"", sub, "\" (want ca, cert, key)"));
        }
        ASSIGN_OR_RETURN(layer.*field, scalar(tls.second, "tls." + sub));
      }
      continue;
    }
    auto it = keys.find(key);
    if (it == keys.end()) {
      std::vector<std::string> known;
      for (const auto& [k, flag] : keys) known.push_back(k);
      known.push_back("tls");
      return absl::InvalidArgumentError(absl::StrCat("config file ", path, ": unknown key \"", key,
                                                     "\" (known: ", absl::StrJoin(known, ", "),
                                                     ")"));
    }
    ASSIGN_OR_RETURN(std::string value, scalar(entry.second, key));
    RETURN_IF_ERROR(Flags().at(it->second).set(layer, value, what));
  }
  return layer;
}

absl::StatusOr<Layer> LoadEnv(const EnvLookup& env) {
  Layer layer;
  if (auto v = env("NODENAME"); v.has_value() && !v->empty()) layer.node_name = *v;
  if (auto v = env("GM_ADDRESS"); v.has_value() && !v->empty()) layer.gm_address = *v;
  if (auto v = env("ROOTFS_MOUNT_DIR"); v.has_value() && !v->empty()) layer.host_root = *v;
  if (auto v = env("BIND_PORT"); v.has_value() && !v->empty()) {
    int port = -1;
    if (!absl::SimpleAtoi(ToAbsl(*v), &port) || port < 0 || port > 65535) {
      return absl::InvalidArgumentError(
          absl::StrCat("env BIND_PORT: \"", *v, "\" is not a port number 0..65535"));
    }
    layer.bind_port = port;
  }
  return layer;
}

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

EnvLookup ProcessEnv() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

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

absl::StatusOr<CommandLine> LoadConfig(const std::vector<std::string>& args, const EnvLookup& env) {
  ASSIGN_OR_RETURN(FlagResult flags, ParseFlags(args));
  CommandLine out;
  out.help = flags.help;
  if (out.help) return out;
  LcConfig& config = out.config;
  if (flags.config_file.has_value()) {
    config.config_file = *flags.config_file;
    ASSIGN_OR_RETURN(Layer file, LoadFile(*flags.config_file));
    RETURN_IF_ERROR(Apply(file, "config file", config));
  }
  ASSIGN_OR_RETURN(Layer environment, LoadEnv(env));
  RETURN_IF_ERROR(Apply(environment, "env", config));
  RETURN_IF_ERROR(Apply(flags.layer, "flags", config));
  if (config.db_path.empty() && !config.host_root.empty()) {
    config.db_path = absl::StrCat(absl::StripSuffix(config.host_root, "/"), "/var/lib/nereid/lc.db");
  }
  RETURN_IF_ERROR(ValidateConfig(config));
  return out;
}

void PrintDaemonUsage(std::ostream& out) {
  out << "usage: localcontroller --node NAME --gm HOST:PORT --db FILE --host-root DIR\n"
         "                       --listen 127.0.0.1:PORT --tls-ca F --tls-cert F --tls-key F\n"
         "                       [--insecure] [--config FILE] [--scan-period 60s]\n"
         "                       [--model-check-period 60s] [--model-http-check-period 1h]\n"
         "                       [--max-request-bytes 1048576] [--http-threads 4]\n"
         "                       [--http-max-connections 4096]\n"
         "                       [--log-level debug|info|warning|error]\n"
         "                       [--s3-ca FILE] [--s3-addressing auto|path|virtual]\n"
         "                       [--keepalive-time 30s] [--keepalive-timeout 10s]\n"
         "                       [--metrics-listen HOST:PORT]   (GET /metrics only; default off)\n"
         "       localcontroller count --format F [--host-root DIR] URL   (see count --help)\n"
         "\n"
         "The LocalController of a Nereid edge node: receives the node's objects from the\n"
         "GlobalManager over mutual TLS, counts dataset samples, verifies models, takes Sedna\n"
         "worker reports on POST /sedna/workers/{worker}/info and serves the operator API.\n"
         "\n"
         "Precedence: flags > environment > config file > defaults. Environment as Sedna's\n"
         "DaemonSet: NODENAME, GM_ADDRESS, BIND_PORT (port of --listen), ROOTFS_MOUNT_DIR.\n"
         "Defaults: --host-root /rootfs, --db <host-root>/var/lib/nereid/lc.db,\n"
         "          --listen 127.0.0.1:9100.\n";
}

}  // namespace nereid::lc
