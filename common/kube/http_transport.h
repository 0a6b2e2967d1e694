#pragma once

// Makes cpp-httplib clients for one API server: plain HTTP or HTTPS with the configured CA (or the
// system roots, or no verification when insecure-skip-tls-verify), client certificate and key.
// TLS material is parsed once, at Create(), so a bad certificate fails loudly at startup.
//
// httplib clients serialize requests internally (one request at a time per client object), so
// concurrent callers each borrow their own client from a small pool of idle keep-alive clients.
// Watches get a dedicated client they own, because cancelling one means stop()ping its client.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/kube/config.h"
#include "httplib.h"

namespace nereid::kube {

class HttpTransport {
 public:
  struct Options {
    absl::Duration connect_timeout = absl::Seconds(5);
    absl::Duration io_timeout = absl::Seconds(30);  // Each read/write wait on the socket.
    size_t max_idle_clients = 16;
  };

  static absl::StatusOr<std::unique_ptr<HttpTransport>> Create(const KubeConfig& config,
                                                               Options options);
  ~HttpTransport();

  HttpTransport(const HttpTransport&) = delete;
  HttpTransport& operator=(const HttpTransport&) = delete;

  // A fresh client with the TLS settings and timeouts applied; keep-alive is off (watch use).
  absl::StatusOr<std::unique_ptr<httplib::ClientImpl>> NewClient() const;

  // An idle keep-alive client from the pool (or a new one, always when `fresh`); `reused` says
  // which. Give it back with Release() after a complete exchange.
  absl::StatusOr<std::unique_ptr<httplib::ClientImpl>> Borrow(bool fresh, bool* reused);
  void Release(std::unique_ptr<httplib::ClientImpl> client);

  // Describes a failed request as a Status: connection problems are kUnavailable, a socket wait
  // that ran out is kDeadlineExceeded, TLS verification failures say what OpenSSL rejected.
  absl::Status TransportError(httplib::Error error, bool timed_out) const;

  const ServerAddress& address() const { return address_; }
  bool https() const { return address_.https; }
  const Options& options() const { return options_; }

  // The reason OpenSSL gave for rejecting the server certificate in the last handshake on this
  // thread, or 0. Reset before each request.
  static long LastVerifyError();
  static void ResetLastVerifyError();

 private:
  struct TlsMaterial;

  HttpTransport(ServerAddress address, Options options, std::unique_ptr<TlsMaterial> tls);

  const ServerAddress address_;
  const Options options_;
  const std::unique_ptr<TlsMaterial> tls_;  // Null for plain HTTP.

  absl::Mutex mu_;
  std::vector<std::unique_ptr<httplib::ClientImpl>> idle_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nereid::kube
