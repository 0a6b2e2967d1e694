// Its own test binary: it blocks SIGTERM/SIGINT and sends them to its own process, which must not
// meet a thread of another test that left them unblocked.

#include "common/process/stop_signals.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/synchronization/mutex.h"
#include "tests/fakes/eventually.h"

namespace nereid::process {
namespace {

bool Pending(int signal_number) {
  sigset_t pending;
  sigemptyset(&pending);
  sigpending(&pending);
  return sigismember(&pending, signal_number) == 1;
}

// Takes a pending stop signal off the process so the next test starts clean.
void Drain(int signal_number) {
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, signal_number);
  const timespec no_wait{0, 0};
  while (sigtimedwait(&one, nullptr, &no_wait) == signal_number) {
  }
}

struct Received {
  absl::Mutex mu;
  std::vector<std::pair<int, int>> calls ABSL_GUARDED_BY(mu);  // (signal, count)

  size_t size() {
    absl::MutexLock lock(&mu);
    return calls.size();
  }
};

TEST_CASE("the watcher hands each stop signal to its handler with a running count") {
  BlockStopSignals();
  Received received;
  StopSignalWatcher watcher([&received](int signal_number, int count) {
    absl::MutexLock lock(&received.mu);
    received.calls.emplace_back(signal_number, count);
  });
  REQUIRE(kill(getpid(), SIGTERM) == 0);
  REQUIRE(fakes::Eventually([&] { return received.size() == 1; }));
  REQUIRE(kill(getpid(), SIGINT) == 0);
  REQUIRE(fakes::Eventually([&] { return received.size() == 2; }));
  absl::MutexLock lock(&received.mu);
  CHECK(received.calls[0] == std::make_pair(SIGTERM, 1));
  CHECK(received.calls[1] == std::make_pair(SIGINT, 2));
}

TEST_CASE("a signal after the watcher is destroyed reaches nothing the handler touched") {
  BlockStopSignals();
  // What the handler touches, destroyed after the watcher as a daemon is in main().
  auto target = std::make_unique<std::atomic<int>>(0);
  {
    StopSignalWatcher watcher([raw = target.get()](int, int) { ++*raw; });
    REQUIRE(kill(getpid(), SIGTERM) == 0);
    REQUIRE(fakes::Eventually([&] { return target->load() == 1; }));
  }  // joined here, with no signal pending to wake it
  target.reset();
  REQUIRE(kill(getpid(), SIGTERM) == 0);
  // Nobody reads it: it stays pending, where a detached reader would have taken it.
  CHECK(Pending(SIGTERM));
  Drain(SIGTERM);
  CHECK_FALSE(Pending(SIGTERM));
}

TEST_CASE("WaitForStopSignal returns the signal that arrived") {
  BlockStopSignals();
  REQUIRE(kill(getpid(), SIGINT) == 0);
  CHECK(WaitForStopSignal() == SIGINT);
  CHECK_FALSE(Pending(SIGINT));
}

}  // namespace
}  // namespace nereid::process
