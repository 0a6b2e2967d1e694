#pragma once

// Certificates for tests of the mTLS edge link, made at test time by scripts/gen-certs.sh into a
// temporary directory (once per test process, removed at exit).

#include <memory>
#include <string>

#include "common/net/tls.h"

namespace nereid::testing {

struct CertSet {
  std::string dir;
  std::string ca;
  std::string gm_cert;
  std::string gm_key;
  std::string NodeCert(const std::string& node) const { return dir + "/nodes/" + node + ".crt"; }
  std::string NodeKey(const std::string& node) const { return dir + "/nodes/" + node + ".key"; }

  net::TlsOptions ServerTls() const { return {ca, gm_cert, gm_key, false}; }
  net::TlsOptions ClientTls(const std::string& node) const {
    return {ca, NodeCert(node), NodeKey(node), false};
  }
};

// A fresh CA with certificates for `nodes` (space-separated) in its own temp dir, removed when the
// returned object is destroyed.
class OwnedCertSet {
 public:
  virtual ~OwnedCertSet() = default;
  virtual const CertSet& set() const = 0;
};
std::unique_ptr<OwnedCertSet> MakeCertSet(const std::string& nodes);

// CA + GM cert + node certs for "edge-a", "edge-b", "edge-c".
const CertSet& TestCerts();
// A second, unrelated CA with a node cert for "edge-a": what an attacker's self-made cert looks
// like.
const CertSet& UntrustedCerts();

}  // namespace nereid::testing
