#pragma once

// The edge relay of a GM replica that does not lead: the node streams that reach it are relayed to
// the leader's hub (relayed_stream.h) instead of being refused, so every replica can hold edge
// connections while one leader holds the desired state, the controllers and the status writes.
//
// What it buys: the TLS connection of a node (its handshake, the OpenSSL and TCP state, about
// two thirds of the ~80 KiB per node of bench/RESULTS.md) lives on the replica the node reached;
// the leader holds one HTTP/2 stream per relayed node on one connection per replica. What it
// costs: a message crosses one more hop.
//
// All relayed streams share one channel to the leader, authenticated with the GM's own
// certificate (the leader trusts the node names it carries only from that certificate; see
// stream_peer.h) and verified under a name of that certificate, since the leader is reached by
// its pod address. When the leader cannot be reached or refuses the relay (e.g. a GM certificate
// without clientAuth), a stream ends as a redirect to the leader: the node dials it itself.
//
// Thread-safe.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/net/keepalive.h"
#include "common/net/peer_identity.h"
#include "common/net/tls.h"
#include "common/time/clock.h"
#include "globalmanager/edgehub/relayed_stream.h"
#include "prometheus/counter.h"
#include "prometheus/gauge.h"
#include "prometheus/registry.h"

namespace nereid::gm {

class EdgeRelay {
 public:
  struct Options {
    net::TlsOptions tls;  // the GM's: presented to the leader, whose certificate it verifies
    // The name the leader's certificate must carry; "" = the first DNS name of our certificate
    // (its CN without DNS names): every replica presents the same certificate.
    std::string verified_name;
    net::KeepaliveOptions keepalive;
    int max_receive_message_bytes = 64 << 20;
    std::shared_ptr<prometheus::Registry> registry;  // null: a private one
    // Edge shards: nodes another live replica owns are sent there, not relayed (null: none).
    const NodeOwnership* ownership = nullptr;
    Clock* clock = Clock::Real();  // when streams opened (EndStreamsWithoutHello)
  };

  static absl::StatusOr<std::unique_ptr<EdgeRelay>> Create(Options options);
  // Ends every relayed stream and waits for them.
  ~EdgeRelay();
  EdgeRelay(const EdgeRelay&) = delete;
  EdgeRelay& operator=(const EdgeRelay&) = delete;

  // Where the leader's hub takes nodes (HOST:PORT); "" relays nothing (this replica leads, or no
  // leader is known). Streams relayed to an earlier leader go on until they end.
  void SetLeaderAddress(const std::string& address);
  // A reactor relaying the stream of `context` to the leader, or nullptr when there is none (or
  // the relay is closed). `unserved_owner`: an owner address that did not serve the node (it is
  // relayed rather than sent there again). `allow_unauthenticated`: the hub's --insecure trust
  // of a Hello without certificate. `on_done` runs when the stream is over (not when nullptr is
  // returned).
  NodeStreamReactor* Relay(grpc::CallbackServerContext* context, net::PeerIdentity peer,
                           std::string unserved_owner, bool allow_unauthenticated,
                           std::function<void()> on_done);
  // Ends every relayed stream with UNAVAILABLE (the nodes redial); later ones are relayed again
  // if a leader address is set.
  void EndAll(const std::string& why);
  // Ends every relayed stream and relays no more, whatever SetLeaderAddress says later (a
  // stopping replica).
  void Close(const std::string& why);

  // The nodes of the relayed streams whose Hello passed and that are not ending.
  std::vector<std::string> Nodes() const;
  // Ends the relayed stream of each node of `moves` (node -> HOST:PORT of its owner now) with
  // UNAVAILABLE and that address in the trailer, so the node dials its owner. Returns how many
  // streams it ended (streams already ending are not counted again, and a node is not sent to an
  // owner it said did not serve it).
  int MoveNodes(const absl::flat_hash_map<std::string, std::string>& moves);

  // Ends with DEADLINE_EXCEEDED each relayed stream whose Hello has not passed within `timeout`
  // of its opening (the hub's Hello timeout, EdgeHub::EndStreamsWithoutHello). Returns how many.
  int EndStreamsWithoutHello(absl::Duration timeout);

  std::size_t open_streams() const;
  // Whether new node streams would be relayed (a leader address is set and the relay is open).
  bool relaying() const;
  // Relayed streams the leader never answered.
  double failures() const { return failed_->Value(); }
  // Streams sent to the replica that owns their node instead of relayed (edge shards).
  double redirects() const { return redirected_->Value(); }

 private:
  EdgeRelay(Options options, std::shared_ptr<grpc::ChannelCredentials> credentials,
            std::string verified_name);
  // The streams open now.
  std::vector<std::shared_ptr<RelayedStream>> Streams() const;

  const Options options_;
  const std::shared_ptr<grpc::ChannelCredentials> credentials_;
  const std::string verified_name_;
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Counter* relayed_;
  prometheus::Counter* failed_;
  prometheus::Counter* redirected_;
  prometheus::Gauge* open_gauge_;

  mutable absl::Mutex mu_;
  std::string leader_address_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  std::shared_ptr<edge::v1::EdgeSync::Stub> leader_ ABSL_GUARDED_BY(mu_);
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  absl::flat_hash_map<uint64_t, std::weak_ptr<RelayedStream>> streams_ ABSL_GUARDED_BY(mu_);
  // When each stream opened, until its Hello timeout has passed (few: streams open rarely).
  absl::flat_hash_map<uint64_t, absl::Time> opened_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nereid::gm
