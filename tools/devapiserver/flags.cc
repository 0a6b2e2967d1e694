#include "tools/devapiserver/flags.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace nereid::devapi {

std::string Usage() {
  return R"(devapiserver: a small Kubernetes-API-compatible server FOR DEVELOPMENT AND TESTS ONLY.
It is not a production API server: no authentication, no authorization, no admission, no
scheduling or kubelet. Use a real cluster in production.

Usage: devapiserver [flags]
  --listen HOST:PORT          address to listen on (default 127.0.0.1:0; port 0 picks a free port).
                              Loopback only unless --allow-non-loopback.
  --data FILE                 persist objects to this SQLite file (default: in memory)
  --kubeconfig-out FILE       write a kubeconfig pointing at the server
  --tls-cert FILE --tls-key FILE   serve HTTPS with this certificate and key
  --tls-ca FILE               CA to put into the kubeconfig (default: insecure-skip-tls-verify)
  --watch-history N           watch events kept for resuming (default 10000); older → 410 Gone
  --bookmark-interval DUR     BOOKMARK period for watches that allow them (default 15s)
  --heartbeat-interval DUR    blank-line period on idle watches without bookmarks (default 15s)
  --max-watch-timeout DUR     longest watch without timeoutSeconds (default 30m)
  --event-ttl DUR             Events are deleted this long after they last occurred (default 1h,
                              as kube-apiserver's --event-ttl)
  --threads N                 HTTP worker threads; each open watch and each idle keep-alive
                              connection holds one (default 64)
  --log-level LEVEL           debug|info|warning|error (default info)
  --allow-non-loopback        allow --listen on a non-loopback address
  --enable-debug-faults       serve /debug/faults (loopback clients only): tests make requests
                              fail (429, 500, ...) and watches expire (410); off by default
  --help                      this text

The first line on stdout is "listening on <URL>", e.g. "listening on http://127.0.0.1:41233".
SIGTERM or SIGINT stops it gracefully.
)";
}

bool IsLoopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

absl::StatusOr<Config> ParseFlags(const std::vector<std::string>& args) {
  Config c;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i];
    std::string value;
    bool has_value = false;
    if (size_t eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_value = true;
    }
    auto next = [&]() -> absl::StatusOr<std::string> {
      if (has_value) return value;
      if (i + 1 >= args.size()) return absl::InvalidArgumentError(absl::StrCat(arg, " needs a value"));
      return args[++i];
    };
    auto duration = [&](absl::Duration* out) -> absl::Status {
      absl::StatusOr<std::string> v = next();
      if (!v.ok()) return v.status();
      if (!absl::ParseDuration(*v, out) || *out <= absl::ZeroDuration()) {
        return absl::InvalidArgumentError(absl::StrCat(arg, ": not a positive duration: ", *v));
      }
      return absl::OkStatus();
    };
    auto count = [&](size_t* out) -> absl::Status {
      absl::StatusOr<std::string> v = next();
      if (!v.ok()) return v.status();
      uint64_t n = 0;
      if (!absl::SimpleAtoi(*v, &n) || n == 0) {
        return absl::InvalidArgumentError(absl::StrCat(arg, ": not a positive number: ", *v));
      }
      *out = n;
      return absl::OkStatus();
    };
    absl::Status s;
    if (arg == "--help" || arg == "-h") {
      c.help = true;
    } else if (arg == "--listen") {
      absl::StatusOr<std::string> v = next();
      if (!v.ok()) return v.status();
      size_t colon = v->rfind(':');
      if (colon == std::string::npos) {
        return absl::InvalidArgumentError(absl::StrCat("--listen wants HOST:PORT, got ", *v));
      }
      c.host = v->substr(0, colon);
      if (c.host.size() > 2 && c.host.front() == '[' && c.host.back() == ']') {
        c.host = c.host.substr(1, c.host.size() - 2);
      }
      if (!absl::SimpleAtoi(v->substr(colon + 1), &c.port) || c.port < 0 || c.port > 65535) {
        return absl::InvalidArgumentError(absl::StrCat("--listen: bad port in ", *v));
      }
    } else if (arg == "--data" || arg == "--kubeconfig-out" || arg == "--tls-cert" ||
               arg == "--tls-key" || arg == "--tls-ca" || arg == "--log-level") {
      absl::StatusOr<std::string> v = next();
      if (!v.ok()) return v.status();
      if (arg == "--data") c.data_file = *v;
      if (arg == "--kubeconfig-out") c.kubeconfig_out = *v;
      if (arg == "--tls-cert") c.tls_cert = *v;
      if (arg == "--tls-key") c.tls_key = *v;
      if (arg == "--tls-ca") c.tls_ca = *v;
      if (arg == "--log-level") c.log_level = *v;
    } else if (arg == "--watch-history") {
      s = count(&c.watch_history);
    } else if (arg == "--threads") {
      s = count(&c.threads);
    } else if (arg == "--bookmark-interval") {
      s = duration(&c.bookmark_interval);
    } else if (arg == "--heartbeat-interval") {
      s = duration(&c.heartbeat_interval);
    } else if (arg == "--max-watch-timeout") {
      s = duration(&c.max_watch_timeout);
    } else if (arg == "--event-ttl") {
      s = duration(&c.event_ttl);
    } else if (arg == "--allow-non-loopback") {
      c.allow_non_loopback = true;
    } else if (arg == "--enable-debug-faults") {
      c.debug_faults = true;
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag: ", args[i], " (see --help)"));
    }
    if (!s.ok()) return s;
  }
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
