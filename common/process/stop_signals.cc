#include "common/process/stop_signals.h"

#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>

#include "common/log/log.h"

namespace nereid::process {
namespace {

sigset_t StopSignalSet() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  return signals;
}

}  // namespace

void BlockStopSignals() {
  const sigset_t signals = StopSignalSet();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
}

int WaitForStopSignal() {
  const sigset_t signals = StopSignalSet();
  int signal_number = 0;
  while (sigwait(&signals, &signal_number) != 0) {
  }
  return signal_number;
}

StopSignalWatcher::StopSignalWatcher(Handler on_signal) : on_signal_(std::move(on_signal)) {
  // Blocked here too, so the watcher works even if main() forgot; threads started before that
  // would still take the signal's default action.
  BlockStopSignals();
  const sigset_t signals = StopSignalSet();
  signal_fd_.Reset(signalfd(-1, &signals, SFD_NONBLOCK | SFD_CLOEXEC));
  wake_fd_.Reset(eventfd(0, EFD_CLOEXEC));
  if (!signal_fd_.valid() || !wake_fd_.valid()) {
    // Out of file descriptors at startup: the signals stay blocked, so the process can still be
    // stopped with SIGKILL; say why SIGTERM does nothing.
    LOG(ERROR) << "stop signals: cannot watch SIGTERM/SIGINT: " << std::strerror(errno);
    return;
  }
  thread_ = std::thread([this] { Run(); });
}

StopSignalWatcher::~StopSignalWatcher() {
  if (thread_.joinable()) {
    const uint64_t one = 1;
    while (write(wake_fd_.get(), &one, sizeof(one)) < 0 && errno == EINTR) {
    }
    thread_.join();
  }
}

void StopSignalWatcher::Run() {
  int count = 0;
  while (true) {
    pollfd fds[2] = {{signal_fd_.get(), POLLIN, 0}, {wake_fd_.get(), POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      LOG(ERROR) << "stop signals: poll: " << std::strerror(errno);
      return;
    }
    if (fds[1].revents != 0) return;  // the destructor asked to stop
    if (fds[0].revents == 0) continue;
    signalfd_siginfo info;
    ssize_t got = read(signal_fd_.get(), &info, sizeof(info));
    if (got != static_cast<ssize_t>(sizeof(info))) continue;  // EAGAIN/EINTR: poll again
    on_signal_(static_cast<int>(info.ssi_signo), ++count);
  }
}

}  // namespace nereid::process
