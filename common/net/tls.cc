#include "common/net/tls.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "common/log/log.h"
#include "common/status/macros.h"
#include "openssl/bio.h"
#include "openssl/err.h"
#include "openssl/pem.h"
#include "openssl/x509.h"
#include "openssl/x509v3.h"

namespace nereid::net {
namespace {
// PEM files bigger than this are certainly not a key or a short chain; refuse instead of reading.
constexpr std::streamoff kMaxPemBytes = 1 << 20;

using BioPtr = std::unique_ptr<BIO, decltype(&BIO_free)>;
using X509Ptr = std::unique_ptr<X509, decltype(&X509_free)>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;

BioPtr MemoryBio(const std::string& data) {
  return BioPtr(BIO_new_mem_buf(data.data(), static_cast<int>(data.size())), &BIO_free);
}

absl::StatusOr<X509Ptr> ParseCertificate(const std::string& pem, const std::string& what) {
  BioPtr bio = MemoryBio(pem);
  X509Ptr cert(bio ? PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr) : nullptr, &X509_free);
  ERR_clear_error();
  if (!cert) return absl::InvalidArgumentError(absl::StrCat(what, ": no X.509 certificate in it"));
  return cert;
}

// Catches the classic misconfiguration (key of another certificate) at start instead of as an
// opaque handshake failure on every connection attempt.
absl::Status CheckKeyPair(const std::string& cert_pem, const std::string& key_pem,
                          const TlsOptions& options) {
  ASSIGN_OR_RETURN(X509Ptr cert, ParseCertificate(cert_pem, options.cert_file));
  BioPtr bio = MemoryBio(key_pem);
  PkeyPtr key(bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr) : nullptr,
              &EVP_PKEY_free);
  if (!key) {
    ERR_clear_error();
    return absl::InvalidArgumentError(
        absl::StrCat(options.key_file, ": no unencrypted private key in it"));
  }
  const bool match = X509_check_private_key(cert.get(), key.get()) == 1;
  ERR_clear_error();
  if (!match) {
    return absl::InvalidArgumentError(
        absl::StrCat(options.key_file, " is not the key of ", options.cert_file));
  }
  if (X509_cmp_current_time(X509_get0_notAfter(cert.get())) < 0) {
    return absl::FailedPreconditionError(absl::StrCat(options.cert_file, " has expired"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<std::string>> CertificateNames(const std::string& pem) {
  ASSIGN_OR_RETURN(X509Ptr cert, ParseCertificate(pem, "certificate"));
  std::vector<std::string> names;
  X509_NAME* subject = X509_get_subject_name(cert.get());
  const int index = subject ? X509_NAME_get_index_by_NID(subject, NID_commonName, -1) : -1;
  if (index >= 0) {
    ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, index));
    names.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(data)),
                       ASN1_STRING_length(data));
  }
  auto* sans = static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(cert.get(), NID_subject_alt_name, nullptr, nullptr));
  if (sans != nullptr) {
    absl::Cleanup free_sans = [sans] { GENERAL_NAMES_free(sans); };
    for (int i = 0; i < sk_GENERAL_NAME_num(sans); ++i) {
      const GENERAL_NAME* name = sk_GENERAL_NAME_value(sans, i);
      if (name->type != GEN_DNS) continue;
      names.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(name->d.dNSName)),
                         ASN1_STRING_length(name->d.dNSName));
    }
  }
  return names;
}

absl::StatusOr<std::string> ReadPemFile(const std::string& path) {
  if (path.empty()) return absl::InvalidArgumentError("empty file name");
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  }
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(0, std::ios::beg);
  if (size < 0 || size > kMaxPemBytes) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a PEM file (size ", size, ")"));
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  std::string content = buffer.str();
  if (content.empty()) return absl::InvalidArgumentError(absl::StrCat(path, ": file is empty"));
  if (content.find("-----BEGIN ") == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": no PEM block (-----BEGIN ...)"));
  }
  return content;
}

absl::Status ValidateTlsOptions(const TlsOptions& options) {
  if (options.insecure) return absl::OkStatus();
  std::string missing;
  if (options.ca_file.empty()) missing += " --tls-ca";
  if (options.cert_file.empty()) missing += " --tls-cert";
  if (options.key_file.empty()) missing += " --tls-key";
  if (!missing.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("mutual TLS needs", missing, " (or --insecure for local experiments)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const TlsOptions& options) {
  RETURN_IF_ERROR(ValidateTlsOptions(options));
  if (options.insecure) {
    LOG(WARNING) << "edge link: --insecure: serving PLAINTEXT gRPC without client authentication; "
                    "node identities are not verified. Use only for local experiments.";
    return grpc::InsecureServerCredentials();
  }
  ASSIGN_OR_RETURN(std::string ca, ReadPemFile(options.ca_file));
  ASSIGN_OR_RETURN(std::string cert, ReadPemFile(options.cert_file));
  ASSIGN_OR_RETURN(std::string key, ReadPemFile(options.key_file));
  RETURN_IF_ERROR(CheckKeyPair(cert, key, options));
  // The default (DONT_REQUEST_CLIENT_CERTIFICATE) would silently accept anonymous clients.
  grpc::SslServerCredentialsOptions ssl(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  ssl.pem_root_certs = std::move(ca);
  ssl.pem_key_cert_pairs.push_back({std::move(key), std::move(cert)});
  std::shared_ptr<grpc::ServerCredentials> creds = grpc::SslServerCredentials(ssl);
  if (!creds) return absl::InvalidArgumentError("gRPC refused the server TLS credentials");
  return creds;
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(
    const TlsOptions& options) {
  RETURN_IF_ERROR(ValidateTlsOptions(options));
  if (options.insecure) {
    LOG(WARNING) << "edge link: --insecure: dialing the GM over PLAINTEXT gRPC without "
                    "authentication. Use only for local experiments.";
    return grpc::InsecureChannelCredentials();
  }
  grpc::SslCredentialsOptions ssl;
  ASSIGN_OR_RETURN(ssl.pem_root_certs, ReadPemFile(options.ca_file));
  ASSIGN_OR_RETURN(ssl.pem_cert_chain, ReadPemFile(options.cert_file));
  ASSIGN_OR_RETURN(ssl.pem_private_key, ReadPemFile(options.key_file));
  RETURN_IF_ERROR(CheckKeyPair(ssl.pem_cert_chain, ssl.pem_private_key, options));
  std::shared_ptr<grpc::ChannelCredentials> creds = grpc::SslCredentials(ssl);
  if (!creds) return absl::InvalidArgumentError("gRPC refused the client TLS credentials");
  return creds;
}

}  // namespace nereid::net
