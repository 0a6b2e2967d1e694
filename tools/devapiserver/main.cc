// devapiserver: a Kubernetes-API-compatible server for development and tests (see README.md).

#include <signal.h>

#include <cstdio>
#include <iostream>
#include <memory>

#include "common/log/log.h"
#include "common/process/stop_signals.h"
#include "common/version/version.h"
#include "tools/devapiserver/api_server.h"
#include "tools/devapiserver/event_ttl.h"
#include "tools/devapiserver/flags.h"
#include "tools/devapiserver/kubeconfig.h"
#include "tools/devapiserver/persistence.h"
#include "tools/devapiserver/registry.h"
#include "tools/devapiserver/storage.h"

namespace nd = nereid::devapi;

int main(int argc, char** argv) {
  absl::StatusOr<nd::Config> config = nd::ParseFlags(std::vector<std::string>(argv + 1, argv + argc));
  if (!config.ok()) {
    std::cerr << "devapiserver: " << config.status().message() << "\n";
    return 2;
  }
  if (config->help) {
    std::cout << nd::Usage();
    return 0;
  }
  if (config->version) {
    std::cout << nereid::version::VersionLine("devapiserver") << "\n";
    return 0;
  }
  for (const std::string& warning : config->warnings) {
    std::cerr << "devapiserver: warning: " << warning << "\n";
  }
  if (!config->log_level.empty()) {
    nereid::log::Level level;
    if (!nereid::log::ParseLevel(config->log_level, &level)) {
      std::cerr << "devapiserver: bad --log-level " << config->log_level << "\n";
      return 2;
    }
    nereid::log::SetMinLevel(level);
  }
  // A client that hangs up mid-write must not kill the server; SIGTERM/SIGINT are read by the
  // watcher below (blocked here before any other thread exists, so all threads inherit it).
  signal(SIGPIPE, SIG_IGN);
  nereid::process::BlockStopSignals();

  std::unique_ptr<nd::SqlitePersistence> persistence;
  if (!config->data_file.empty()) {
    auto opened = nd::SqlitePersistence::Open(config->data_file);
    if (!opened.ok()) {
      std::cerr << "devapiserver: --data " << config->data_file << ": " << opened.status() << "\n";
      return 1;
    }
    persistence = *std::move(opened);
  }
  nd::Registry registry;
  nd::StoreOptions store_options;
  store_options.history_size = config->watch_history;
  store_options.persistence = persistence.get();
  nd::Store store(&registry, store_options);
  if (absl::Status s = store.Start(); !s.ok()) {
    std::cerr << "devapiserver: loading state: " << s << "\n";
    return 1;
  }
  nd::EventExpirer events(&store, &registry, config->event_ttl);
  events.Start();
  nd::ApiServerOptions server_options;
  server_options.host = config->host;
  server_options.port = config->port;
  server_options.tls_cert_file = config->tls_cert;
  server_options.tls_key_file = config->tls_key;
  server_options.threads = config->threads;
  server_options.bookmark_interval = config->bookmark_interval;
  server_options.heartbeat_interval = config->heartbeat_interval;
  server_options.max_watch_timeout = config->max_watch_timeout;
  server_options.debug_faults = config->debug_faults;
  nd::ApiServer server(&store, server_options);
  if (absl::StatusOr<int> port = server.Bind(); !port.ok()) {
    std::cerr << "devapiserver: " << port.status().message() << "\n";
    return 1;
  }
  if (!config->kubeconfig_out.empty()) {
    nd::KubeconfigOptions kc;
    kc.server_url = server.url();
    kc.certificate_authority = config->tls_ca;
    if (absl::Status s = nd::WriteKubeconfig(config->kubeconfig_out, kc); !s.ok()) {
      std::cerr << "devapiserver: --kubeconfig-out: " << s.message() << "\n";
      return 1;
    }
  }
  // The contract with scripts and tests: the first stdout line names the address.
  std::cout << "listening on " << server.url() << std::endl;

  absl::Status run;
  {
    // Joined at the end of this block, whether Run() returned for a signal or a failed listener.
    nereid::process::StopSignalWatcher signals([&server](int signal_number, int count) {
      if (count > 1) return;  // already stopping
      LOG(INFO) << "devapiserver: signal " << signal_number << ", stopping";
      server.Stop();
    });
    run = server.Run();
  }
  if (!run.ok()) {
    std::cerr << "devapiserver: " << run << "\n";
    return 1;
  }
  LOG(INFO) << "devapiserver: stopped";
  return 0;
}
