#include "tests/common/kube/test_certs.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>

namespace nereid::testing {
namespace {

struct Free {
  void operator()(X509* x) const { X509_free(x); }
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
  void operator()(BIO* b) const { BIO_free(b); }
};

std::string BioString(BIO* bio) {
  char* data = nullptr;
  long size = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(size));
}

std::unique_ptr<EVP_PKEY, Free> NewKey() {
  std::unique_ptr<EVP_PKEY, Free> key(EVP_EC_gen("P-256"));
  if (!key) throw std::runtime_error("EVP_EC_gen failed");
  return key;
}

void AddExt(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr) throw std::runtime_error("X509V3_EXT_conf_nid failed");
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

Pem Issue(const std::string& cn, X509* issuer, EVP_PKEY* issuer_key, bool ca, bool server,
          const std::string& san) {
  static std::atomic<long> serial{1000};
  std::unique_ptr<EVP_PKEY, Free> key = NewKey();
  std::unique_ptr<X509, Free> cert(X509_new());
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial.fetch_add(1));
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 86400);
  X509_set_pubkey(cert.get(), key.get());
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509* signer = issuer != nullptr ? issuer : cert.get();
  EVP_PKEY* signer_key = issuer_key != nullptr ? issuer_key : key.get();
  X509_set_issuer_name(cert.get(), X509_get_subject_name(signer));
  if (ca) {
    AddExt(cert.get(), signer, NID_basic_constraints, "critical,CA:TRUE");
    AddExt(cert.get(), signer, NID_key_usage, "critical,keyCertSign,cRLSign");
  } else {
    AddExt(cert.get(), signer, NID_basic_constraints, "critical,CA:FALSE");
    AddExt(cert.get(), signer, NID_key_usage, "critical,digitalSignature,keyEncipherment");
    AddExt(cert.get(), signer, NID_ext_key_usage, server ? "serverAuth" : "clientAuth");
    if (server && !san.empty()) AddExt(cert.get(), signer, NID_subject_alt_name, san.c_str());
  }
  if (X509_sign(cert.get(), signer_key, EVP_sha256()) == 0) throw std::runtime_error("X509_sign");
  std::unique_ptr<BIO, Free> cert_bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509(cert_bio.get(), cert.get());
  std::unique_ptr<BIO, Free> key_bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_PrivateKey(key_bio.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr);
  return {BioString(cert_bio.get()), BioString(key_bio.get())};
}

template <typename T, typename Read>
std::unique_ptr<T, Free> FromPem(const std::string& pem, Read read) {
  std::unique_ptr<BIO, Free> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  return std::unique_ptr<T, Free>(read(bio.get(), nullptr, nullptr, nullptr));
}

}  // namespace

Pem MakeCa(const std::string& common_name) {
  return Issue(common_name, nullptr, nullptr, /*ca=*/true, /*server=*/false, "");
}

Pem MakeLeaf(const Pem& ca, const std::string& common_name, bool server,
             const std::string& subject_alt_name) {
  auto ca_cert = FromPem<X509>(ca.cert, PEM_read_bio_X509);
  auto ca_key = FromPem<EVP_PKEY>(ca.key, PEM_read_bio_PrivateKey);
  if (!ca_cert || !ca_key) throw std::runtime_error("bad CA PEM");
  return Issue(common_name, ca_cert.get(), ca_key.get(), /*ca=*/false, server, subject_alt_name);
}

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "nereid-test-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string TempDir::Write(const std::string& name, const std::string& content) const {
  const std::filesystem::path full = std::filesystem::path(path_) / name;
  std::filesystem::create_directories(full.parent_path());
  std::ofstream out(full, std::ios::binary | std::ios::trunc);
  out << content;
  out.close();
  if (!out) throw std::runtime_error("cannot write " + full.string());
  return full.string();
}

}  // namespace nereid::testing
