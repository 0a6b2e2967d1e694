#pragma once

// The edge port's listener, in front of gRPC's TLS handshakes.
//
// gRPC accepts a connection and starts its TLS handshake at once, however many are already
// handshaking. In a reconnect storm larger than the GM can handshake within the nodes' connect
// deadline (gRPC's 20 s), the queue outlives its clients: the GM spends its CPU on handshakes
// whose node has given up and redialed, and almost nobody gets through (bench/RESULTS.md, "GM
// restart"). The gate owns the listening sockets instead, accepts into its own queue and hands a
// connection to gRPC (ExternalConnectionAcceptor) when HandshakeAdmission says so: a bounded
// number handshake at a time, and a connection whose node hung up or that waited too long is
// closed unhandshaken, so its node redials with backoff. Accepting itself never stops for good:
// out of descriptors, the gate pauses and retries, where gRPC 1.51's listener would close (the
// "Failed accept4" that left a GM's edge port deaf after a storm, bench/RESULTS.md).

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/process/unique_fd.h"
#include "globalmanager/edgehub/handshake_admission.h"
#include "globalmanager/edgehub/hub_metrics.h"

struct sockaddr;

namespace nereid::gm {

// "ADDRESS:PORT" of a socket address, the same for the accepted socket and for gRPC's peer
// string of its stream: IPv4 (also IPv4-mapped IPv6) as 10.0.0.1:5000, IPv6 as [fd00::1]:5000.
// "" for other families.
std::string PeerAddressKey(const sockaddr* address);
// The key of gRPC's peer URI ("ipv4:10.0.0.1:5000", "ipv6:[fd00::1]:5000", brackets possibly
// percent-encoded); "" when it is not an IP peer.
std::string PeerAddressKeyFromUri(std::string_view uri);

class ConnectionGate {
 public:
  // Passes an accepted connection (and the listening socket it came from) on to gRPC, which owns
  // `fd` from then on.
  using HandOver = std::function<void(int listener_fd, int fd)>;

  // Listens on every address `listen` (HOST:PORT) names; the unspecified address (0.0.0.0, ::)
  // listens on IPv6 and IPv4 where the host has both, as gRPC does. Port 0 picks a free port, the
  // same for every address. Accepted sockets get TCP_USER_TIMEOUT `tcp_user_timeout` (the edge
  // keepalive's timeout, as gRPC's listener sets it; zero: none). Accepts nothing until Start.
  static absl::StatusOr<std::unique_ptr<ConnectionGate>> Listen(const std::string& listen,
                                                                HandshakeAdmissionOptions options,
                                                                absl::Duration tcp_user_timeout,
                                                                HubMetrics* metrics);
  ~ConnectionGate();
  ConnectionGate(const ConnectionGate&) = delete;
  ConnectionGate& operator=(const ConnectionGate&) = delete;

  int port() const { return port_; }

  // Accepts on a thread of its own from now on.
  void Start(HandOver hand_over);
  // A stream arrived; `peer` is gRPC's peer URI (grpc::ServerContext::peer()).
  void StreamOpened(std::string_view peer);
  // Closes the listening sockets and the connections still waiting; the ones handed over are
  // gRPC's. Idempotent.
  void Stop();

 private:
  ConnectionGate(std::vector<UniqueFd> listeners, int port, UniqueFd wake_fd,
                 int tcp_user_timeout_ms, HandshakeAdmissionOptions options, HubMetrics* metrics);

  void Run();
  // Accepts what `listener` has waiting into the admission queue; false after an error that
  // calls for a pause (out of descriptors or memory).
  bool AcceptAll(int listener);
  // Refuses the waiting connections whose node hung up or that waited too long (every second).
  std::vector<HandshakeAdmission::Decision> Sweep();
  // Hands over or closes each decided connection (outside the lock: gRPC starts the handshake).
  void CarryOut(const std::vector<HandshakeAdmission::Decision>& decisions);
  // Under mu_, so Stop cannot close the eventfd in between.
  void Wake() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Closed by Stop, after the gate's thread has ended.
  std::vector<UniqueFd> listeners_;
  const int port_;
  UniqueFd wake_fd_;  // eventfd: a slot freed, or Stop
  const int tcp_user_timeout_ms_;
  HubMetrics* const metrics_;
  HandOver hand_over_;
  std::thread thread_;
  absl::Time last_accept_warning_ = absl::InfinitePast();  // the gate thread's

  absl::Mutex mu_;
  // Its line changes only on the gate's thread (accepting, hand-overs, sweeps); StreamOpened, on
  // gRPC's threads, only frees slots.
  HandshakeAdmission admission_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool stopped_ = false;  // Stop's own, on the caller's thread
};

}  // namespace nereid::gm
