// globalmanager: the Nereid GlobalManager daemon. Wiring only: configuration → Daemon (daemon.h)
// → wait for SIGTERM/SIGINT or a fatal error (e.g. lost leadership) → graceful stop.

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "common/log/log.h"
#include "common/process/stop_signals.h"
#include "common/version/version.h"
#include "globalmanager/config.h"
#include "globalmanager/daemon.h"

int main(int argc, char** argv) {
  using nereid::gm::CommandLine;
  std::vector<std::string> args(argv + 1, argv + argc);
  absl::StatusOr<CommandLine> command = nereid::gm::LoadConfig(args, nereid::gm::ProcessEnv());
  if (!command.ok()) {
    std::cerr << "globalmanager: " << command.status().message() << "\n";
    return 2;
  }
  if (command->help) {
    nereid::gm::PrintUsage(std::cout);
    return 0;
  }
  if (command->version) {
    std::cout << nereid::version::VersionLine("globalmanager") << "\n";
    return 0;
  }
  if (!command->config.log_level.empty()) {
    nereid::log::Level level;
    if (nereid::log::ParseLevel(command->config.log_level, &level)) nereid::log::SetMinLevel(level);
  }
  for (const std::string& warning : command->warnings) LOG(WARNING) << warning;

  // Debian's Abseil is built without NDEBUG, so every absl::Mutex lock runs a deadlock check over
  // a graph of all mutexes; with one session mutex per connected edge node it took a fifth of
  // the GM's CPU at 10,000 nodes (bench/RESULTS.md). Tests keep the check.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);

  // Before the daemon starts threads: they inherit the mask, so only the watcher below reads them.
  nereid::process::BlockStopSignals();

  absl::StatusOr<std::unique_ptr<nereid::gm::Daemon>> daemon =
      nereid::gm::Daemon::Create(command->config);
  if (!daemon.ok()) {
    LOG(ERROR) << "globalmanager: " << daemon.status();
    return 1;
  }
  if (absl::Status started = (*daemon)->Start(); !started.ok()) {
    LOG(ERROR) << "globalmanager: " << started;
    return 1;
  }
  std::cout << "globalmanager: edge hub on port " << (*daemon)->edge_port() << ", http on port "
            << (*daemon)->http_port() << std::endl;

  nereid::gm::Daemon* gm = daemon->get();
  // Declared after the daemon, so it is destroyed (its thread joined) before the daemon is.
  nereid::process::StopSignalWatcher signals([gm](int signal_number, int count) {
    if (count == 1) {
      LOG(INFO) << "globalmanager: signal " << signal_number << ": stopping";
      gm->RequestStop();
      return;
    }
    LOG(WARNING) << "globalmanager: second signal: exiting at once";
    std::_Exit(1);
  });

  absl::Status result = gm->Wait();
  gm->Stop();
  if (!result.ok()) {
    LOG(ERROR) << "globalmanager: " << result;
    return 1;
  }
  return 0;
}
