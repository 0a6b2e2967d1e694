#pragma once

// Who a Sync stream speaks for, and whether its Hello may claim a node.
//
// A node's stream speaks for the node its client certificate names. A stream that another GM
// replica relays (edge_relay.h) arrives on that replica's connection, with the node's name in the
// request metadata kRelayedNodeMetadata; it speaks for that node only when the connection presents
// the GM's own certificate (all replicas share one), so a node cannot claim another node by
// adding the metadata: from any other peer it is ignored.

#include <string>

#include "common/net/peer_identity.h"
#include "grpcpp/security/auth_context.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/status.h"
#include "nereid/edge/v1/sync.pb.h"

namespace nereid::gm {

// Recognises a relaying replica by the certificate it presents.
class RelayTrust {
 public:
  RelayTrust() = default;  // trusts no peer
  // `certificate_pem`: the GM's certificate (a chain: its first certificate counts).
  explicit RelayTrust(const std::string& certificate_pem);

  // Whether the peer of `context` presented exactly that certificate.
  bool Trusts(const grpc::AuthContext* context) const;

 private:
  std::string certificate_;  // base64 body of the first PEM certificate, whitespace removed
};

struct StreamPeer {
  net::PeerIdentity identity;
  bool relayed = false;  // a replica relays the stream of the node `identity` names
  // net::kUnservedOwnerMetadata: an owner address that did not serve the node ("" when none).
  std::string unserved_owner;
};

// `allow_unauthenticated` (--insecure): a peer without certificate may relay too, as it may claim
// any node in its Hello.
StreamPeer ResolveStreamPeer(const grpc::CallbackServerContext& context, const RelayTrust& trust,
                             bool allow_unauthenticated);

// The checks a stream's first message must pass before anything is sent for the node: a Hello
// with a valid node name (a DNS subdomain) the peer may claim (the certificate names it, or --insecure and no certificate)
// and our protocol version. OK or the status to end the stream with.
grpc::Status CheckHello(const edge::v1::SyncRequest& first, const net::PeerIdentity& peer,
                        bool allow_unauthenticated);

}  // namespace nereid::gm
