#pragma once

// A TCP proxy on loopback that integration tests put between two real processes (LC ↔ GM,
// GM ↔ API server) to inject network faults while both sides run unchanged:
//   - delay: every chunk is held for a fixed time before it is forwarded (one way);
//   - bandwidth: each direction is limited to N bytes per second;
//   - blackhole: nothing is forwarded in either direction and new connections are accepted but
//     never served, like a link whose packets are dropped: the endpoints' keepalives must notice.
//     Bytes stay queued in the kernel, so a link restored before the endpoints give up resumes
//     without loss, as TCP would after retransmission;
//   - half-open: client → server still flows, server → client is withheld;
//   - reset: every open connection is closed with RST; with refuse on, new ones are too.
// Faults apply to open and new connections alike and can be switched at any time from the test
// thread. One thread accepts; each connection gets one thread that polls both sockets.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace nereid::testing {

class FaultProxy {
 public:
  // Listens on 127.0.0.1 (an ephemeral port) and forwards to 127.0.0.1:upstream_port.
  static absl::StatusOr<std::unique_ptr<FaultProxy>> Start(int upstream_port);
  ~FaultProxy();  // Closes every connection and joins every thread.

  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;

  int port() const { return port_; }
  // Points new connections elsewhere (e.g. at a new leader); open ones keep their upstream.
  void SetUpstreamPort(int port);

  void SetDelay(absl::Duration one_way);
  void SetBandwidth(int64_t bytes_per_second);  // 0 = unlimited
  void SetBlackhole(bool on);
  void SetHalfOpen(bool on);
  void SetRefuse(bool on);
  // Closes every open connection with RST (SO_LINGER 0) on both sides.
  void ResetAll();

  int64_t connections_accepted() const { return accepted_.load(); }
  int open_connections() const;

 private:
  struct Faults {
    absl::Duration delay;
    int64_t bandwidth = 0;
    bool blackhole = false;
    bool half_open = false;
    bool refuse = false;
  };
  class Connection;

  FaultProxy(int listen_fd, int port, int upstream_port);
  void AcceptLoop();
  Faults CurrentFaults() const;
  void Reap() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const int listen_fd_;
  const int port_;
  std::atomic<bool> stopping_{false};
  std::atomic<int64_t> accepted_{0};
  mutable absl::Mutex mu_;
  int upstream_port_ ABSL_GUARDED_BY(mu_);
  Faults faults_ ABSL_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<Connection>> connections_ ABSL_GUARDED_BY(mu_);
  std::thread acceptor_;
};

}  // namespace nereid::testing
