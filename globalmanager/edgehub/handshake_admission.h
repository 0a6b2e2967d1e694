#pragma once

// Which accepted edge connections go on to their TLS handshake, and when (ConnectionGate's
// policy, without its sockets and thread; not thread-safe, the gate holds the lock).
//
// A connection waits here until fewer than `max_pending` handed-over connections are still
// handshaking. A handed-over connection counts as handshaking until a stream arrives from its
// address (StreamOpened) or `pending_timeout` passes (a failed handshake opens no stream); one
// whose node had sent nothing yet counts only for `silent_pending_timeout`, so connections that
// never speak (a port scan, a load balancer's TCP check, a flood) cannot hold the slots. When its
// turn comes, a connection whose node hung up meanwhile, or that waited longer than `max_wait`,
// is refused instead: handshaking it would only spend the CPU that the connections behind it need
// to finish within their nodes' connect deadline.
//
// The newest connection goes first (LIFO), and a full line drops its oldest. In a storm larger
// than the GM can handshake in time, first come first served would hand every connection over
// when it has the least time left; newest first serves the ones with the most, at the rate the
// GM can, and the others are closed early and their nodes redial after their backoff, which
// spreads the storm. (Adaptive LIFO, as in Facebook's Thrift servers; below the bound nobody
// waits and the order does not matter.)

#include <cstddef>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "common/strings/absl_compat.h"

namespace nereid::gm {

struct HandshakeAdmissionOptions {
  // Connections handed to gRPC whose stream has not arrived yet (at least 1).
  std::size_t max_pending = 256;
  // gRPC's client gives a connection 20 s to connect and handshake; one that waited this long for
  // its turn has too little of it left to be worth a handshake.
  absl::Duration max_wait = absl::Seconds(10);
  absl::Duration pending_timeout = absl::Seconds(5);
  // For a connection whose first bytes (a TLS ClientHello) had not arrived when it was handed over.
  absl::Duration silent_pending_timeout = absl::Milliseconds(500);
  // Accepted connections waiting, each holding a descriptor; a new one beyond it pushes the
  // oldest out.
  std::size_t max_waiting = 4096;
};

class HandshakeAdmission {
 public:
  struct Connection {
    int fd = -1;
    int listener_fd = -1;
    std::string peer;  // PeerAddressKey of the remote address
    absl::Time accepted;
  };
  enum class Verdict { kHandOver, kPeerGone, kWaitedTooLong, kCrowdedOut };
  // What a look at the socket says of the node at the other end.
  enum class Peer { kGone, kSilent, kSent };
  using Probe = std::function<Peer(int fd)>;
  struct Decision {
    Connection connection;
    Verdict verdict;
  };

  explicit HandshakeAdmission(HandshakeAdmissionOptions options) : options_(options) {}

  // Puts `connection` in line; when the line is full, its oldest is refused (kCrowdedOut).
  std::optional<Decision> Queue(Connection connection);

  // Takes every connection whose turn has come at `now`, newest first: the ones handed over (now
  // counted as handshaking) and the ones refused. `probe(fd)` looks at the socket. Handshakes
  // past their timeout are forgotten first.
  std::vector<Decision> Next(absl::Time now, const Probe& probe);

  // Refuses every waiting connection that hung up or waited too long, wherever it is in line, so
  // it gives back its descriptor before its turn.
  std::vector<Decision> Sweep(absl::Time now, const Probe& probe);

  // A stream arrived from `peer`: its connection has finished its handshake.
  void StreamOpened(std::string_view peer) { pending_.erase(ToAbsl(peer)); }

  // When Next() may have something new to say without any other event: the earliest pending
  // timeout while connections wait. InfiniteFuture when nothing waits.
  absl::Time NextDeadline() const;

  // Closes nothing: hands back every waiting connection (at shutdown).
  std::vector<Connection> TakeQueued();
  // The descriptors of the waiting connections, to probe before a Sweep.
  std::vector<int> QueuedFds() const;

  std::size_t queued() const { return queue_.size(); }
  std::size_t pending() const { return pending_.size(); }

 private:
  void ForgetExpired(absl::Time now);
  // kHandOver when the connection may still go on; `peer` is the probe's answer.
  Verdict Judge(const Connection& connection, absl::Time now, Peer peer) const;

  const HandshakeAdmissionOptions options_;
  std::deque<Connection> queue_;
  // Peer address -> when its handshake stops counting.
  absl::flat_hash_map<std::string, absl::Time> pending_;
};

}  // namespace nereid::gm
