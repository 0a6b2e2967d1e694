#include "bench/edge_simulator/node_certs.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "openssl/bio.h"
#include "openssl/bn.h"
#include "openssl/err.h"
#include "openssl/evp.h"
#include "openssl/pem.h"
#include "openssl/rand.h"
#include "openssl/x509.h"
#include "openssl/x509v3.h"

namespace nereid::bench {
namespace {

using BioPtr = std::unique_ptr<BIO, decltype(&BIO_free)>;
using X509Ptr = std::unique_ptr<X509, decltype(&X509_free)>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using ExtPtr = std::unique_ptr<X509_EXTENSION, decltype(&X509_EXTENSION_free)>;
using BnPtr = std::unique_ptr<BIGNUM, decltype(&BN_free)>;

// The OpenSSL error queue as text (and cleared), for messages.
std::string OpenSslError() {
  std::string text;
  while (unsigned long code = ERR_get_error()) {
    char buffer[256];
    ERR_error_string_n(code, buffer, sizeof(buffer));
    if (!text.empty()) text += "; ";
    text += buffer;
  }
  return text.empty() ? "unknown OpenSSL error" : text;
}

BioPtr MemoryBio(const std::string& data) {
  return BioPtr(BIO_new_mem_buf(data.data(), static_cast<int>(data.size())), &BIO_free);
}

std::string BioText(BIO* bio) {
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  return size > 0 ? std::string(data, static_cast<std::size_t>(size)) : std::string();
}

absl::Status AddExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX context;
  X509V3_set_ctx_nodb(&context);
  X509V3_set_ctx(&context, issuer, cert, nullptr, nullptr, 0);
  ExtPtr extension(X509V3_EXT_conf_nid(nullptr, &context, nid, value.c_str()),
                   &X509_EXTENSION_free);
  if (!extension || X509_add_ext(cert, extension.get(), -1) != 1) {
    return absl::InternalError(
        absl::StrCat("certificate extension ", OBJ_nid2sn(nid), "=", value, ": ", OpenSslError()));
  }
  return absl::OkStatus();
}

}  // namespace

struct NodeCertIssuer::Ca {
  X509Ptr cert{nullptr, &X509_free};
  PkeyPtr key{nullptr, &EVP_PKEY_free};
};

NodeCertIssuer::NodeCertIssuer(std::unique_ptr<Ca> ca) : ca_(std::move(ca)) {}
NodeCertIssuer::~NodeCertIssuer() = default;

absl::StatusOr<std::unique_ptr<NodeCertIssuer>> NodeCertIssuer::Create(
    const std::string& ca_cert_pem, const std::string& ca_key_pem) {
  auto ca = std::make_unique<Ca>();
  BioPtr cert_bio = MemoryBio(ca_cert_pem);
  ca->cert.reset(cert_bio ? PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr) : nullptr);
  if (!ca->cert) {
    ERR_clear_error();
    return absl::InvalidArgumentError("CA certificate: no X.509 certificate in it");
  }
  BioPtr key_bio = MemoryBio(ca_key_pem);
  ca->key.reset(key_bio ? PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr)
                        : nullptr);
  if (!ca->key) {
    ERR_clear_error();
    return absl::InvalidArgumentError("CA key: no unencrypted private key in it");
  }
  if (X509_check_private_key(ca->cert.get(), ca->key.get()) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError("the CA key is not the key of the CA certificate");
  }
  return std::unique_ptr<NodeCertIssuer>(new NodeCertIssuer(std::move(ca)));
}

absl::StatusOr<NodeIdentity> NodeCertIssuer::Issue(const std::string& node, int days) const {
  PkeyPtr key(EVP_EC_gen("P-256"), &EVP_PKEY_free);
  if (!key) return absl::InternalError(absl::StrCat("EC key for ", node, ": ", OpenSslError()));

  X509Ptr cert(X509_new(), &X509_free);
  if (!cert) return absl::InternalError(OpenSslError());
  X509_set_version(cert.get(), 2);  // v3
  // A random 127-bit serial, as openssl x509 -req does with -CAcreateserial's random start.
  BnPtr serial(BN_new(), &BN_free);
  if (!serial || BN_rand(serial.get(), 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) != 1 ||
      BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert.get())) == nullptr) {
    return absl::InternalError(absl::StrCat("serial for ", node, ": ", OpenSslError()));
  }
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), static_cast<long>(days) * 86400);
  X509_set_pubkey(cert.get(), key.get());
  X509_NAME* subject = X509_get_subject_name(cert.get());
  const auto* node_bytes = reinterpret_cast<const unsigned char*>(node.c_str());
  if (X509_NAME_add_entry_by_txt(subject, "O", MBSTRING_ASC,
                                 reinterpret_cast<const unsigned char*>("nereid"), -1, -1,
                                 0) != 1 ||
      X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC, node_bytes, -1, -1, 0) != 1) {
    return absl::InvalidArgumentError(absl::StrCat("subject for ", node, ": ", OpenSslError()));
  }
  X509_set_issuer_name(cert.get(), X509_get_subject_name(ca_->cert.get()));
  for (const auto& [nid, value] :
       {std::pair<int, std::string>{NID_basic_constraints, "critical,CA:FALSE"},
        {NID_key_usage, "critical,digitalSignature,keyEncipherment"},
        {NID_ext_key_usage, "clientAuth"},
        {NID_subject_key_identifier, "hash"},
        {NID_authority_key_identifier, "keyid"},
        {NID_subject_alt_name, absl::StrCat("DNS:", node)}}) {
    if (absl::Status added = AddExtension(cert.get(), ca_->cert.get(), nid, value); !added.ok()) {
      return added;
    }
  }
  if (X509_sign(cert.get(), ca_->key.get(), EVP_sha256()) == 0) {
    return absl::InternalError(
        absl::StrCat("signing the certificate of ", node, ": ", OpenSslError()));
  }

  BioPtr cert_out(BIO_new(BIO_s_mem()), &BIO_free);
  BioPtr key_out(BIO_new(BIO_s_mem()), &BIO_free);
  if (!cert_out || !key_out || PEM_write_bio_X509(cert_out.get(), cert.get()) != 1 ||
      PEM_write_bio_PrivateKey(key_out.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) !=
          1) {
    return absl::InternalError(absl::StrCat("PEM of ", node, ": ", OpenSslError()));
  }
  return NodeIdentity{node, BioText(cert_out.get()), BioText(key_out.get())};
}

}  // namespace nereid::bench
