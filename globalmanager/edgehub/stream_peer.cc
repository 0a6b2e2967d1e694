#include "globalmanager/edgehub/stream_peer.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/net/edge_protocol.h"
#include "common/strings/dns_name.h"
#include "grpc/grpc_security_constants.h"

namespace nereid::gm {
namespace {

// The base64 body of the first certificate in `pem`, without whitespace: the same certificate
// compares equal however its lines were wrapped.
std::string CertificateBody(std::string_view pem) {
  constexpr std::string_view kBegin = "-----BEGIN CERTIFICATE-----";
  constexpr std::string_view kEnd = "-----END CERTIFICATE-----";
  const std::size_t begin = pem.find(kBegin);
  if (begin == std::string_view::npos) return "";
  const std::size_t body = begin + kBegin.size();
  const std::size_t end = pem.find(kEnd, body);
  if (end == std::string_view::npos) return "";
  std::string out;
  for (char c : pem.substr(body, end - body)) {
    if (!absl::ascii_isspace(static_cast<unsigned char>(c))) out.push_back(c);
  }
  return out;
}

}  // namespace

RelayTrust::RelayTrust(const std::string& certificate_pem)
    : certificate_(CertificateBody(certificate_pem)) {}

bool RelayTrust::Trusts(const grpc::AuthContext* context) const {
  if (certificate_.empty() || context == nullptr || !context->IsPeerAuthenticated()) return false;
  for (const grpc::string_ref& pem : context->FindPropertyValues(GRPC_X509_PEM_CERT_PROPERTY_NAME)) {
    if (CertificateBody(std::string_view(pem.data(), pem.size())) == certificate_) return true;
  }
  return false;
}

StreamPeer ResolveStreamPeer(const grpc::CallbackServerContext& context, const RelayTrust& trust,
                             bool allow_unauthenticated) {
  StreamPeer peer;
  const std::shared_ptr<const grpc::AuthContext> auth = context.auth_context();
  peer.identity = net::PeerIdentityFrom(auth.get());
  const auto& metadata = context.client_metadata();
  if (const auto unserved = metadata.find(net::kUnservedOwnerMetadata); unserved != metadata.end()) {
    peer.unserved_owner.assign(unserved->second.data(), unserved->second.size());
  }
  const auto relayed = metadata.find(net::kRelayedNodeMetadata);
  if (relayed == metadata.end()) return peer;
  if (trust.Trusts(auth.get())) {
    const std::string node(relayed->second.data(), relayed->second.size());
    peer.identity.authenticated = true;
    peer.identity.common_name = node;
    peer.identity.dns_names = {node};
    peer.relayed = true;
  } else if (allow_unauthenticated && !peer.identity.authenticated) {
    peer.relayed = true;  // unauthenticated as before: its Hello's claim is trusted anyway
  }
  return peer;
}

grpc::Status CheckHello(const edge::v1::SyncRequest& first, const net::PeerIdentity& peer,
                        bool allow_unauthenticated) {
  if (!first.has_hello()) {
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                        "the first message of a Sync stream must be a Hello");
  }
  const edge::v1::Hello& hello = first.hello();
  if (hello.node_name().empty()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "Hello without node_name");
  }
  // Kubernetes node names; also what may travel on as a certificate name or metadata value.
  if (!IsDnsSubdomain(hello.node_name())) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "Hello's node_name is not a node name (a lower-case RFC 1123 subdomain)");
  }
  const bool trust_claim = allow_unauthenticated && !peer.authenticated;
  if (!trust_claim && !peer.Names(hello.node_name())) {
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        absl::StrCat("client certificate (", peer.DebugString(), ") is not node ",
                                     hello.node_name()));
  }
  if (hello.protocol_version() != net::kEdgeProtocolVersion) {
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                        absl::StrCat("unsupported protocol version ", hello.protocol_version(),
                                     "; this GM speaks ", net::kEdgeProtocolVersion));
  }
  return grpc::Status::OK;
}

}  // namespace nereid::gm
