#pragma once

// Test-time PKI: a CA and certificates it signs, generated with the OpenSSL API (EC P-256), so
// HTTPS tests need no fixture files. Everything here is for tests only.

#include <string>

namespace nereid::testing {

struct Pem {
  std::string cert;
  std::string key;
};

// A self-signed CA certificate.
Pem MakeCa(const std::string& common_name);
// A leaf certificate signed by `ca`. `server` makes it a serverAuth certificate with the given
// subjectAltName (OpenSSL syntax); otherwise it is for clientAuth.
Pem MakeLeaf(const Pem& ca, const std::string& common_name, bool server,
             const std::string& subject_alt_name = "IP:127.0.0.1,DNS:localhost");

// A fresh directory under $TMPDIR, removed with its content on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  // Writes `content` to path()/name and returns the full path.
  std::string Write(const std::string& name, const std::string& content) const;

 private:
  std::string path_;
};

}  // namespace nereid::testing
