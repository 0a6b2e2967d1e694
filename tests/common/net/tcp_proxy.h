#pragma once

// A loopback TCP proxy that can "freeze": it stops moving bytes in both directions while keeping
// every connection open, which is what a dead link (unplugged cable, NAT entry dropped, powered-off
// node) looks like to the endpoints. Keepalive tests use it to check that a dead link is noticed.

#include <atomic>
#include <thread>

namespace nereid::testing {

class FreezableProxy {
 public:
  // Listens on 127.0.0.1 (free port) and forwards each connection to 127.0.0.1:target_port.
  explicit FreezableProxy(int target_port);
  ~FreezableProxy();
  FreezableProxy(const FreezableProxy&) = delete;
  FreezableProxy& operator=(const FreezableProxy&) = delete;

  int port() const { return port_; }
  void Freeze() { frozen_.store(true); }

 private:
  void Loop();

  const int target_port_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> frozen_{false};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace nereid::testing
