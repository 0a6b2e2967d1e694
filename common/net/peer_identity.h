#pragma once

// Who is on the other end of a gRPC call, as established by the TLS handshake: the subject CN and
// the DNS subject alternative names of the verified client certificate. The GM takes a node's
// identity from here and never from a field of a message.

#include <string>
#include <string_view>
#include <vector>

#include "grpcpp/security/auth_context.h"

namespace nereid::net {

struct PeerIdentity {
  bool authenticated = false;          // a verified client certificate was presented
  std::string common_name;             // subject CN ("" when absent)
  std::vector<std::string> dns_names;  // DNS SANs

  // Whether the certificate names `name` (as CN or as a DNS SAN). False when unauthenticated.
  bool Names(std::string_view name) const;
  // "CN=edge-1 DNS=[edge-1]" for logs and error messages.
  std::string DebugString() const;
};

// Reads the identity from a call's auth context (nullptr / insecure → unauthenticated).
PeerIdentity PeerIdentityFrom(const grpc::AuthContext* context);

}  // namespace nereid::net
