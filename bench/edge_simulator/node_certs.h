#pragma once

// Node client certificates made in process with the OpenSSL API, signed by the CA key that
// scripts/gen-certs.sh wrote: the same shape as the script's node certificates (EC P-256,
// CN = node, SAN DNS = node, extendedKeyUsage clientAuth), in well under a millisecond each
// instead of three openssl processes (about 60–100 ms) per node. The simulator needs one distinct
// identity per node because the GM takes the node name from the client certificate.

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace nereid::bench {

struct NodeIdentity {
  std::string node;
  std::string cert_pem;
  std::string key_pem;  // Secret in real deployments; here a throwaway benchmark key.
};

class NodeCertIssuer {
 public:
  // `ca_cert_pem` / `ca_key_pem`: the CA certificate and its unencrypted private key (PEM).
  static absl::StatusOr<std::unique_ptr<NodeCertIssuer>> Create(const std::string& ca_cert_pem,
                                                                const std::string& ca_key_pem);
  ~NodeCertIssuer();
  NodeCertIssuer(const NodeCertIssuer&) = delete;
  NodeCertIssuer& operator=(const NodeCertIssuer&) = delete;

  // A fresh key and a certificate for `node` valid for `days` (from an hour ago, for clock skew).
  absl::StatusOr<NodeIdentity> Issue(const std::string& node, int days = 7) const;

 private:
  struct Ca;
  explicit NodeCertIssuer(std::unique_ptr<Ca> ca);
  std::unique_ptr<Ca> ca_;
};

}  // namespace nereid::bench
