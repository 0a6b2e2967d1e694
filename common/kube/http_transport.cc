#include "common/kube/http_transport.h"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/strings/absl_compat.h"

namespace nereid::kube {
namespace {

struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
using UniqueX509 = std::unique_ptr<X509, X509Free>;
using UniquePkey = std::unique_ptr<EVP_PKEY, PkeyFree>;
using UniqueBio = std::unique_ptr<BIO, BioFree>;

// OpenSSL runs the handshake (and this callback) on the requesting thread, so a thread_local is
// enough to carry the verification error from the callback back to the caller.
thread_local long t_last_verify_error = 0;

int RecordVerifyError(int preverify_ok, X509_STORE_CTX* ctx) {
  if (!preverify_ok && t_last_verify_error == 0) t_last_verify_error = X509_STORE_CTX_get_error(ctx);
  return preverify_ok;
}

absl::StatusOr<std::vector<UniqueX509>> ParseCertificates(const std::string& pem,
                                                          std::string_view what) {
  UniqueBio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  std::vector<UniqueX509> certs;
  while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    certs.emplace_back(cert);
  }
  ERR_clear_error();  // The loop always ends with a "no start line" error.
  if (certs.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(ToAbsl(what), " contains no PEM certificate"));
  }
  return certs;
}

absl::StatusOr<UniquePkey> ParsePrivateKey(const std::string& pem) {
  UniqueBio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  UniquePkey key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  ERR_clear_error();
  if (!key) return absl::InvalidArgumentError("client key is not a valid PEM private key");
  return key;
}

bool IsIpAddress(const std::string& host) {
  unsigned char buf[sizeof(struct in6_addr)];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

void ApplyTimeouts(httplib::ClientImpl& client, const HttpTransport::Options& options) {
  auto micros = [](absl::Duration d) {
    return std::chrono::microseconds(absl::ToInt64Microseconds(d));
  };
  client.set_connection_timeout(micros(options.connect_timeout));
  client.set_read_timeout(micros(options.io_timeout));
  client.set_write_timeout(micros(options.io_timeout));
}

}  // namespace

struct HttpTransport::TlsMaterial {
  bool insecure = false;
  std::vector<UniqueX509> ca_certs;      // Empty: the system trust store.
  std::vector<UniqueX509> client_chain;  // [0] is the client certificate, the rest intermediates.
  UniquePkey client_key;
};

HttpTransport::HttpTransport(ServerAddress address, Options options,
                             std::unique_ptr<TlsMaterial> tls)
    : address_(std::move(address)), options_(options), tls_(std::move(tls)) {}

HttpTransport::~HttpTransport() = default;

absl::StatusOr<std::unique_ptr<HttpTransport>> HttpTransport::Create(const KubeConfig& config,
                                                                     Options options) {
  absl::StatusOr<ServerAddress> address = ParseServerAddress(config.server);
  if (!address.ok()) return address.status();
  std::unique_ptr<TlsMaterial> tls;
  if (address->https) {
    tls = std::make_unique<TlsMaterial>();
    tls->insecure = config.insecure_skip_tls_verify;
    if (!config.ca_pem.empty() && !tls->insecure) {
      absl::StatusOr<std::vector<UniqueX509>> ca = ParseCertificates(config.ca_pem, "CA data");
      if (!ca.ok()) return ca.status();
      tls->ca_certs = *std::move(ca);
    }
    if (!config.client_cert_pem.empty()) {
      absl::StatusOr<std::vector<UniqueX509>> chain =
          ParseCertificates(config.client_cert_pem, "client certificate data");
      if (!chain.ok()) return chain.status();
      absl::StatusOr<UniquePkey> key = ParsePrivateKey(config.client_key_pem);
      if (!key.ok()) return key.status();
      if (X509_check_private_key(chain->front().get(), key->get()) != 1) {
        ERR_clear_error();
        return absl::InvalidArgumentError("client key does not match the client certificate");
      }
      tls->client_chain = *std::move(chain);
      tls->client_key = *std::move(key);
    }
  } else if (!config.client_cert_pem.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("server ", config.server, " is plain http but a client certificate is set"));
  }
  auto transport = std::unique_ptr<HttpTransport>(
      new HttpTransport(*std::move(address), options, std::move(tls)));
  // Build one client now so an unusable TLS setup fails here rather than on the first request.
  absl::StatusOr<std::unique_ptr<httplib::ClientImpl>> probe = transport->NewClient();
  if (!probe.ok()) return probe.status();
  return transport;
}

absl::StatusOr<std::unique_ptr<httplib::ClientImpl>> HttpTransport::NewClient() const {
  std::unique_ptr<httplib::ClientImpl> client;
  if (!tls_) {
    client = std::make_unique<httplib::ClientImpl>(address_.host, address_.port);
  } else {
    std::unique_ptr<httplib::SSLClient> ssl;
    if (tls_->client_key) {
      // httplib takes its own references (SSL_CTX_use_certificate / use_PrivateKey).
      ssl = std::make_unique<httplib::SSLClient>(address_.host, address_.port,
                                                 tls_->client_chain.front().get(),
                                                 tls_->client_key.get());
    } else {
      ssl = std::make_unique<httplib::SSLClient>(address_.host, address_.port);
    }
    if (!ssl->is_valid()) {
      ERR_clear_error();
      return absl::InternalError("cannot set up the TLS client context (client certificate?)");
    }
    SSL_CTX* ctx = ssl->ssl_context();
    for (size_t i = 1; i < tls_->client_chain.size(); ++i) {
      X509_up_ref(tls_->client_chain[i].get());  // The context takes ownership of this reference.
      SSL_CTX_add_extra_chain_cert(ctx, tls_->client_chain[i].get());
    }
    // httplib's own verification would add the system roots on top of our CA; verify in the
    // handshake ourselves instead, against exactly the configured roots, with hostname checking.
    ssl->enable_server_certificate_verification(false);
    if (tls_->insecure) {
      SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
    } else {
      if (tls_->ca_certs.empty()) {
        SSL_CTX_set_default_verify_paths(ctx);
      } else {
        X509_STORE* store = X509_STORE_new();
        for (const UniqueX509& cert : tls_->ca_certs) X509_STORE_add_cert(store, cert.get());
        SSL_CTX_set_cert_store(ctx, store);  // Takes ownership.
      }
      X509_VERIFY_PARAM* param = SSL_CTX_get0_param(ctx);
      if (IsIpAddress(address_.host)) {
        X509_VERIFY_PARAM_set1_ip_asc(param, address_.host.c_str());
      } else {
        X509_VERIFY_PARAM_set1_host(param, address_.host.c_str(), address_.host.size());
      }
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, RecordVerifyError);
    }
    client = std::move(ssl);
  }
  ApplyTimeouts(*client, options_);
  client->set_keep_alive(false);
  client->set_url_encode(false);  // Paths and queries arrive already encoded.
  client->set_follow_location(false);
  client->set_tcp_nodelay(true);
  return client;
}

absl::StatusOr<std::unique_ptr<httplib::ClientImpl>> HttpTransport::Borrow(bool fresh,
                                                                          bool* reused) {
  *reused = false;
  if (!fresh) {
    absl::MutexLock lock(&mu_);
    if (!idle_.empty()) {
      std::unique_ptr<httplib::ClientImpl> client = std::move(idle_.back());
      idle_.pop_back();
      *reused = true;
      return client;
    }
  }
  absl::StatusOr<std::unique_ptr<httplib::ClientImpl>> client = NewClient();
  if (client.ok()) (*client)->set_keep_alive(true);
  return client;
}

void HttpTransport::Release(std::unique_ptr<httplib::ClientImpl> client) {
  if (!client) return;
  absl::MutexLock lock(&mu_);
  if (idle_.size() < options_.max_idle_clients) idle_.push_back(std::move(client));
}

absl::Status HttpTransport::TransportError(httplib::Error error, bool timed_out) const {
  const std::string server = absl::StrCat(address_.https ? "https://" : "http://", address_.host,
                                          ":", address_.port);
  switch (error) {
    case httplib::Error::Connection:
      return absl::UnavailableError(absl::StrCat("cannot connect to ", server));
    case httplib::Error::ConnectionTimeout:
      return absl::DeadlineExceededError(absl::StrCat("connecting to ", server, " timed out"));
    case httplib::Error::Read:
    case httplib::Error::Write:
    case httplib::Error::Canceled: {
      if (timed_out) {
        return absl::DeadlineExceededError(absl::StrCat("request to ", server, " timed out"));
      }
      // With TLS 1.3 a refused client certificate arrives as an alert on the first read.
      std::string detail;
      if (const unsigned long tls_error = ERR_peek_last_error(); tls_error != 0) {
        const char* reason = ERR_reason_error_string(tls_error);
        if (reason != nullptr) detail = absl::StrCat(": TLS: ", reason);
      }
      return absl::UnavailableError(absl::StrCat("connection to ", server, " failed (",
                                                 httplib::to_string(error), ")", detail));
    }
    case httplib::Error::SSLConnection:
    case httplib::Error::SSLServerVerification:
      if (t_last_verify_error != 0) {
        return absl::UnavailableError(
            absl::StrCat("TLS: server certificate of ", server, " rejected: ",
                         X509_verify_cert_error_string(t_last_verify_error)));
      }
      if (const unsigned long tls_error = ERR_peek_last_error(); tls_error != 0) {
        const char* reason = ERR_reason_error_string(tls_error);
        return absl::UnavailableError(absl::StrCat("TLS handshake with ", server, " failed: ",
                                                   reason != nullptr ? reason : "unknown"));
      }
      return absl::UnavailableError(absl::StrCat("TLS handshake with ", server, " failed"));
    case httplib::Error::SSLLoadingCerts:
      return absl::InternalError("TLS: cannot load certificates");
    case httplib::Error::Compression:
      return absl::DataLossError(absl::StrCat("bad compressed response from ", server));
    default:
      return absl::UnavailableError(
          absl::StrCat("request to ", server, " failed: ", httplib::to_string(error)));
  }
}

long HttpTransport::LastVerifyError() { return t_last_verify_error; }
void HttpTransport::ResetLastVerifyError() {
  t_last_verify_error = 0;
  ERR_clear_error();
}

}  // namespace nereid::kube
