#include "common/net/peer_identity.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "grpc/grpc_security_constants.h"

namespace nereid::net {
namespace {

std::vector<std::string> Values(const grpc::AuthContext& context, const char* property) {
  std::vector<std::string> out;
  for (const grpc::string_ref& value : context.FindPropertyValues(property)) {
    out.emplace_back(value.data(), value.size());
  }
  return out;
}

}  // namespace

bool PeerIdentity::Names(std::string_view name) const {
  if (!authenticated || name.empty()) return false;
  if (common_name == name) return true;
  return std::find(dns_names.begin(), dns_names.end(), name) != dns_names.end();
}

std::string PeerIdentity::DebugString() const {
  if (!authenticated) return "unauthenticated peer";
  return absl::StrCat("CN=", common_name, " DNS=[", absl::StrJoin(dns_names, ","), "]");
}

PeerIdentity PeerIdentityFrom(const grpc::AuthContext* context) {
  PeerIdentity identity;
  if (context == nullptr || !context->IsPeerAuthenticated()) return identity;
  identity.authenticated = true;
  std::vector<std::string> cn = Values(*context, GRPC_X509_CN_PROPERTY_NAME);
  if (!cn.empty()) identity.common_name = cn.front();
  // peer_dns holds only DNS SANs; the generic SAN property would also carry IP addresses, which
  // must never pass for a node name.
  identity.dns_names = Values(*context, GRPC_PEER_DNS_PROPERTY_NAME);
  return identity;
}

}  // namespace nereid::net
