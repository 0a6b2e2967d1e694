// The LocalController executable:
//   localcontroller [flags]            the daemon (localcontroller/config.h, daemon.h); runs until
//                                      SIGTERM or SIGINT, then stops its parts in reverse order
//   localcontroller count [flags] URL  print the sample count of a dataset (count_command.h)
// Once listening it prints "listening on http://HOST:PORT" on stdout (scripts and tests read the
// port from it when --listen asks for port 0).

#include <signal.h>
#include <string.h>

#include <iostream>
#include <string>
#include <vector>

#include "common/failpoint/failpoint.h"
#include "common/log/log.h"
#include "common/process/stop_signals.h"
#include "common/version/version.h"
#include "localcontroller/config.h"
#include "localcontroller/daemon.h"
#include "localcontroller/dataset/count_command.h"

namespace {

int RunDaemon(const std::vector<std::string>& args) {
  absl::StatusOr<nereid::lc::CommandLine> command_line =
      nereid::lc::LoadConfig(args, nereid::lc::ProcessEnv());
  if (!command_line.ok()) {
    std::cerr << "localcontroller: " << command_line.status().message() << "\n"
              << "(run localcontroller --help for the flags)\n";
    return 2;
  }
  if (command_line->help) {
    nereid::lc::PrintDaemonUsage(std::cout);
    return 0;
  }
  if (command_line->version) {
    std::cout << nereid::version::VersionLine("localcontroller") << "\n";
    return 0;
  }
  for (const std::string& warning : command_line->warnings) {
    std::cerr << "localcontroller: warning: " << warning << "\n";
  }
  const nereid::lc::LcConfig& config = command_line->config;
  if (!config.log_level.empty()) {
    nereid::log::Level level;
    if (nereid::log::ParseLevel(config.log_level, &level)) nereid::log::SetMinLevel(level);
  }
  // Test-only crash points (common/failpoint/failpoint.h); nothing is armed unless the env says so.
  if (absl::Status armed = nereid::failpoint::InitFromEnv(); !armed.ok()) {
    std::cerr << "localcontroller: " << armed.message() << "\n";
    return 2;
  }

  // A file-size limit (RLIMIT_FSIZE, a quota-like cap on the node) must fail the write that
  // crosses it with EFBIG, which SQLite reports and /readyz shows, not kill the daemon.
  signal(SIGXFSZ, SIG_IGN);
  // Every thread the daemon starts inherits this mask, so the signals reach only the wait below.
  nereid::process::BlockStopSignals();

  absl::StatusOr<std::unique_ptr<nereid::lc::Daemon>> daemon = nereid::lc::Daemon::Create(config);
  if (!daemon.ok()) {
    std::cerr << "localcontroller: " << daemon.status().message() << "\n";
    return 1;
  }
  if (absl::Status started = (*daemon)->Start(); !started.ok()) {
    std::cerr << "localcontroller: " << started.message() << "\n";
    return 1;
  }
  std::cout << "listening on " << (*daemon)->url() << std::endl;

  const int signal_number = nereid::process::WaitForStopSignal();
  LOG(INFO) << "localcontroller: " << strsignal(signal_number) << ", shutting down";
  (*daemon)->Stop();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "count") {
    args.erase(args.begin());
    return nereid::lc::dataset::RunCountCommand(args, std::cout, std::cerr);
  }
  if (!args.empty() && args[0] == "help") {
    nereid::lc::PrintDaemonUsage(std::cout);
    return 0;
  }
  return RunDaemon(args);
}
