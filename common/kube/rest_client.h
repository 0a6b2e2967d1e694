#pragma once

// RestClient: KubeClient over HTTP(S) to a real API server (or tools/devapiserver), client-go's
// dynamic client plus rest.Config behaviour:
//  - any group/version/resource via kube::Resource paths, namespaced or cluster-scoped;
//  - every call has a timeout (connect and each socket wait; the whole body transfer too);
//  - a client-side token bucket (default 50 qps, burst 100: client-go's 5/10 starves a busy
//    controller) on the injected Clock;
//  - on 429 or 5xx carrying Retry-After the call waits that long on the Clock (capped) and retries,
//    at most max_retries times, for every verb (the server asked for it); a GET whose pooled
//    keep-alive connection turned out closed is resent at once on a new connection; anything
//    else (refused connection, timeout, TLS failure, other errors) returns at once;
//  - errors decoded from the server's Status body (common/kube/errors.h);
//  - bearer token re-read from its file when it rotates (token_source.h).
// Thread-safe: each concurrent call borrows its own connection from a small keep-alive pool.
//
// Watch() is not retried: the reflector owns watch backoff and relisting.

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/kube/client.h"
#include "common/kube/config.h"
#include "common/kube/token_source.h"
#include "common/time/clock.h"
#include "common/time/token_bucket.h"

namespace nereid::kube {

class HttpTransport;

// Told of every answered or failed request and of every client-side throttling wait (the GM
// turns them into metrics). Called on the caller's thread; must be thread-safe and quick.
class RequestObserver {
 public:
  virtual ~RequestObserver() = default;
  // `code`: the HTTP status of one attempt, or 0 when no answer came (connection, TLS, timeout).
  virtual void OnResponse(std::string_view method, int code) = 0;
  // A request waited `waited` for the client-side rate limit.
  virtual void OnThrottled(absl::Duration waited) = 0;
};

class RestClient final : public KubeClient {
 public:
  struct Options {
    absl::Duration timeout = absl::Seconds(30);
    absl::Duration connect_timeout = absl::Seconds(5);
    double qps = 50;  // <= 0 disables the client-side limit.
    int burst = 100;
    int max_retries = 10;
    // A server's Retry-After longer than this is shortened to it, so a controller stays responsive.
    absl::Duration max_retry_after = absl::Seconds(60);
    // How often a token file is checked for rotation.
    absl::Duration token_recheck_interval = absl::Minutes(1);
    // A watch without timeoutSeconds that receives nothing for this long is ended (dead peers do
    // not hang a reflector forever). With timeoutSeconds the limit is that plus 30 s.
    absl::Duration watch_idle_timeout = absl::Minutes(15);
    size_t max_watch_event_bytes = 16 << 20;
    size_t max_idle_connections = 16;
    std::string user_agent;  // Default "nereid/<version>".
    RequestObserver* observer = nullptr;  // optional; must outlive the client
    Clock* clock = Clock::Real();
  };

  static absl::StatusOr<std::unique_ptr<RestClient>> Create(const KubeConfig& config,
                                                            Options options);
  static absl::StatusOr<std::unique_ptr<RestClient>> Create(const KubeConfig& config) {
    return Create(config, Options());
  }
  ~RestClient() override;

  absl::StatusOr<Json> Get(const Resource& resource, std::string_view ns,
                           std::string_view name) override;
  absl::StatusOr<ObjectList> List(const Resource& resource, std::string_view ns,
                                  const ListOptions& options) override;
  absl::StatusOr<Json> Create(const Resource& resource, std::string_view ns,
                              const Json& object) override;
  absl::StatusOr<Json> Update(const Resource& resource, const Json& object) override;
  absl::StatusOr<Json> UpdateStatus(const Resource& resource, const Json& object) override;
  absl::StatusOr<Json> Patch(const Resource& resource, std::string_view ns, std::string_view name,
                             PatchType type, const Json& patch,
                             std::string_view subresource = "") override;
  absl::Status Delete(const Resource& resource, std::string_view ns, std::string_view name,
                      const DeleteOptions& options = {}) override;
  absl::StatusOr<std::unique_ptr<WatchStream>> Watch(const Resource& resource, std::string_view ns,
                                                     const ListOptions& options) override;
  absl::StatusOr<bool> IsServed(const Resource& resource) override;

  // GET of an arbitrary API path ("/version", "/apis"), decoded as JSON.
  absl::StatusOr<Json> GetPath(std::string_view path);

  const KubeConfig& config() const { return config_; }

 private:
  struct Request {
    std::string method;
    std::string path;  // Relative to the server's base path, query included, already encoded.
    std::string body;
    std::string content_type;
  };
  struct Response {
    int status = 0;
    std::string body;
    std::string retry_after;
  };

  RestClient(KubeConfig config, Options options, std::unique_ptr<HttpTransport> transport);

  // Sends with rate limiting and retries; a transport failure is an error, any HTTP answer is not.
  absl::StatusOr<Response> Send(const Request& request);
  absl::StatusOr<Response> SendOnce(const Request& request, bool fresh_connection,
                                    bool* reused_connection_broke);
  // Send() and decode a 2xx JSON body; other codes become the server's error.
  absl::StatusOr<Json> Call(const Request& request);
  absl::StatusOr<Json> Put(const Resource& resource, const Json& object,
                           std::string_view subresource);
  // The Authorization header value for the next request ("" for none).
  std::string Authorization();
  // Waits on the clock for a client-side rate limit token; says so when the wait was long.
  void Throttle(std::string_view what);

  const KubeConfig config_;
  const Options options_;
  const std::unique_ptr<HttpTransport> transport_;
  TokenSource token_;
  TokenBucket limiter_;
};

// Query-string encoding of one key or value (RFC 3986 unreserved characters kept).
std::string EncodeQueryComponent(std::string_view text);

}  // namespace nereid::kube
