#pragma once

// SIGTERM and SIGINT for the daemons' main(): blocked in every thread and read synchronously, on
// a thread the caller owns (StopSignalWatcher) or on the main thread (WaitForStopSignal), never in
// an asynchronous handler. The watcher's destructor stops and joins its thread, so a signal that
// arrives during teardown cannot reach an object that is already gone.
//
//   int main() {
//     nereid::process::BlockStopSignals();        // before any thread starts
//     auto daemon = Daemon::Create(...);           // its threads inherit the blocked mask
//     nereid::process::StopSignalWatcher watcher(  // declared after the daemon: destroyed first
//         [&](int signal_number, int count) { daemon->RequestStop(); });
//     ...
//   }

#include <functional>
#include <thread>

#include "common/process/unique_fd.h"

namespace nereid::process {

// Blocks SIGTERM and SIGINT in the calling thread. Call it in main() before any other thread
// starts: threads inherit the mask, so the signals stay pending until they are read here.
void BlockStopSignals();

// Waits on the calling thread for SIGTERM or SIGINT (blocked by BlockStopSignals) and returns the
// signal number.
int WaitForStopSignal();

// Reads SIGTERM/SIGINT (blocked by BlockStopSignals) on its own thread and calls `on_signal` there
// with the signal number and how many stop signals have arrived so far (1 for the first).
// Destroying the watcher wakes and joins that thread (waiting for a running `on_signal` to
// return); a signal arriving afterwards stays blocked and pending, and touches nothing.
class StopSignalWatcher {
 public:
  using Handler = std::function<void(int signal_number, int count)>;

  explicit StopSignalWatcher(Handler on_signal);
  ~StopSignalWatcher();

  StopSignalWatcher(const StopSignalWatcher&) = delete;
  StopSignalWatcher& operator=(const StopSignalWatcher&) = delete;

 private:
  void Run();

  Handler on_signal_;
  UniqueFd signal_fd_;  // signalfd for SIGTERM and SIGINT
  UniqueFd wake_fd_;    // eventfd the destructor writes to end Run()
  std::thread thread_;
};

}  // namespace nereid::process
