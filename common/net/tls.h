#pragma once

// Credentials for the GM <-> LC gRPC link: mutual TLS from PEM files (--tls-ca --tls-cert
// --tls-key), or plaintext only when explicitly asked for (--insecure, local experiments).

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"

namespace nereid::net {

struct TlsOptions {
  std::string ca_file;    // CA that signed the peer's certificate
  std::string cert_file;  // our certificate chain (PEM)
  std::string key_file;   // our private key (PEM)
  // Plaintext, no peer identity. Logs a warning whenever credentials are built.
  bool insecure = false;
};

// Validates the option combination: all three files with TLS, none required with insecure.
absl::Status ValidateTlsOptions(const TlsOptions& options);

// Server side: requires and verifies a client certificate signed by ca_file.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const TlsOptions& options);

// Client side: presents cert/key and trusts only ca_file for the server.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(
    const TlsOptions& options);

// The names a certificate vouches for, as the GM reads them off a client certificate: the subject
// CN followed by the DNS subject alternative names. `pem` is the first certificate of a chain.
absl::StatusOr<std::vector<std::string>> CertificateNames(const std::string& pem);

// Reads a whole PEM file; the error names the file and the flag-relevant problem (missing,
// unreadable, empty, not PEM). The content is never logged.
absl::StatusOr<std::string> ReadPemFile(const std::string& path);

}  // namespace nereid::net
