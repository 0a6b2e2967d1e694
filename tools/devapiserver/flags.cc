#include "tools/devapiserver/flags.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/config/option_set.h"
#include "common/status/macros.h"

namespace nereid::devapi {

// A new flag is one line here and a field in Config.
config::OptionSet RegisterOptions(Config& c) {
  config::OptionSet options(
      "devapiserver", "usage: devapiserver [flags]",
      "devapiserver: a small Kubernetes-API-compatible server FOR DEVELOPMENT AND TESTS ONLY.\n"
      "It is not a production API server: no authentication, no authorization, no admission, no\n"
      "scheduling or kubelet. Use a real cluster in production.\n",
      "The first line on stdout is \"listening on <URL>\", e.g. \"listening on "
      "http://127.0.0.1:41233\".\nSIGTERM or SIGINT stops it gracefully.");
  options.AddCustom(
      "listen", "HOST:PORT", absl::StrCat(c.host, ":", c.port),
      "address to listen on (port 0 picks a free port); loopback only unless "
      "--allow-non-loopback",
      [&c](std::string_view value, std::string*) -> absl::Status {
        const size_t colon = value.rfind(':');
        if (colon == std::string_view::npos) {
          return absl::InvalidArgumentError("wants HOST:PORT");
        }
        std::string host(value.substr(0, colon));
        if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
          host = host.substr(1, host.size() - 2);
        }
        int port = 0;
        if (!absl::SimpleAtoi(std::string(value.substr(colon + 1)), &port) || port < 0 ||
            port > 65535) {
          return absl::InvalidArgumentError("bad port");
        }
        c.host = std::move(host);
        c.port = port;
        return absl::OkStatus();
      });
  options.Add("data", &c.data_file, "persist objects to this SQLite file (empty: in memory)");
  options.Add("kubeconfig-out", &c.kubeconfig_out, "write a kubeconfig pointing at the server");
  options.Add("tls-cert", &c.tls_cert, "serve HTTPS with this certificate (with --tls-key)");
  options.Add("tls-key", &c.tls_key, "the key of --tls-cert");
  options.Add("tls-ca", &c.tls_ca,
              "CA to put into the kubeconfig (empty: insecure-skip-tls-verify)");
  options.Add("watch-history", &c.watch_history,
              "watch events kept for resuming; older → 410 Gone", 1);
  options.Add("bookmark-interval", &c.bookmark_interval,
              "BOOKMARK period for watches that allow them", absl::Nanoseconds(1));
  options.Add("heartbeat-interval", &c.heartbeat_interval,
              "blank-line period on idle watches without bookmarks", absl::Nanoseconds(1));
  options.Add("max-watch-timeout", &c.max_watch_timeout,
              "longest watch without timeoutSeconds", absl::Nanoseconds(1));
  options.Add("event-ttl", &c.event_ttl,
              "Events are deleted this long after they last occurred (kube-apiserver's "
              "--event-ttl)",
              absl::Nanoseconds(1));
  options.Add("threads", &c.threads,
              "HTTP worker threads; each open watch and each idle keep-alive connection holds one",
              1);
  options.Add("log-level", &c.log_level, "debug|info|warning|error (empty: info)");
  options.AddSwitch("allow-non-loopback", &c.allow_non_loopback, true,
                    "allow --listen on a non-loopback address");
  options.AddSwitch("enable-debug-faults", &c.debug_faults, true,
                    "serve /debug/faults (loopback clients only): tests make requests fail (429, "
                    "500, ...) and watches expire (410)");
  return options;
}

std::string Usage() {
  Config defaults;
  return RegisterOptions(defaults).Help();
}

bool IsLoopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

absl::StatusOr<Config> ParseFlags(const std::vector<std::string>& args) {
  Config c;
  config::OptionSet options = RegisterOptions(c);
  ASSIGN_OR_RETURN(config::OptionSet::Loaded loaded, options.Load(args, config::NoEnv()));
  c.help = loaded.help;
  c.version = loaded.version;
  c.warnings = std::move(loaded.warnings);
  if (c.help || c.version) return c;
  if (c.tls_cert.empty() != c.tls_key.empty()) {
    return absl::InvalidArgumentError("--tls-cert and --tls-key go together");
  }
  if (!c.allow_non_loopback && !IsLoopback(c.host)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "refusing to listen on non-loopback address ", c.host,
        ": devapiserver has no authentication; pass --allow-non-loopback if you really mean it"));
  }
  return c;
}

}  // namespace nereid::devapi
