#pragma once

// An HTTP/1.1 listener on libmicrohttpd's event loop: connections wait in poll(), not on a thread,
// so a thousand slow or idle clients (slowloris) cost memory, not the threads that serve worker
// reports. A request reaches the handler only when its headers and body are complete; the
// handler runs on one of `threads` event-loop threads and must not block for long.
//
// Limits: `max_connections` open at once (beyond it new connections are closed at once);
// `idle_timeout` of silence closes a connection; headers larger than the per-connection memory
// pool (32 KiB) get 431/414 from libmicrohttpd; a body over `max_body_bytes` is not buffered: the
// handler sees `body_too_large` and its answer closes the connection.
//
// libmicrohttpd stays behind the pimpl. The LC's REST server and the GM's health endpoint use it.

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace nereid::http {

struct HttpRequest {
  std::string method;
  std::string path;  // decoded, without the query string
  std::string body;
  bool body_too_large = false;  // the body was over the limit and is not in `body`
};

struct HttpResponse {
  int status = 200;
  std::string body;
  std::string content_type;
  std::vector<std::pair<std::string, std::string>> headers;
};

struct HttpListenerOptions {
  std::string host = "127.0.0.1";  // an address or a name; no brackets around IPv6
  int port = 0;                    // 0 picks a free port
  size_t max_body_bytes = 1 << 20;
  int threads = 4;
  unsigned max_connections = 4096;
  absl::Duration idle_timeout = absl::Seconds(10);
};

class HttpListener {
 public:
  using Handler = std::function<HttpResponse(const HttpRequest&)>;

  // Binds (SO_REUSEADDR, never SO_REUSEPORT: a second process must not share the port) and
  // starts serving. Unavailable when the address cannot be bound or the event loop cannot start.
  static absl::StatusOr<std::unique_ptr<HttpListener>> Start(const HttpListenerOptions& options,
                                                             Handler handler);
  ~HttpListener();  // Stop()
  HttpListener(const HttpListener&) = delete;
  HttpListener& operator=(const HttpListener&) = delete;

  // Stops accepting, closes every connection and joins the event-loop threads. Idempotent; the
  // handler is not called after it returns.
  void Stop();

  int port() const;

 private:
  class Impl;
  explicit HttpListener(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Raises this process's soft limit on open files to its hard limit (as Go's runtime does), so the
// listener's `max_connections` is not cut short by the 1,024 most shells and units start with.
// Returns the soft limit in effect afterwards.
absl::StatusOr<unsigned long> RaiseOpenFileLimit();

}  // namespace nereid::http
