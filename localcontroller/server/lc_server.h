#pragma once

// The LocalController's REST server (one listener, default 127.0.0.1:9100):
//   POST /sedna/workers/{worker}/info     Sedna's worker report call, body and replies exactly as
//                                         Sedna's LC (see worker/worker_intake.h)
//   GET  /healthz                         200 while the process serves HTTP
//   GET  /readyz                          200 when StateView::Ready(), else 503 with the reason
//   GET  /metrics                         Prometheus text format
//   GET  /api/v1/status                   node, cloud link, outbox, counts, version
//   GET  /api/v1/datasets[/{ns}/{name}]   spec, count, last scan, error
//   GET  /api/v1/models[/{ns}/{name}]     spec, verification
//   GET  /api/v1/workers                  last report of each worker
// Errors: 404 unknown path or object, 405 known path with another method (Allow header), 413 body
// over `max_body_bytes`, 400 malformed input, 500 if a handler throws (a safety net: handlers
// return errors, they do not throw). Bodies: {"error":{"code","reason","message"}}, except under
// /sedna/ where Sedna's {"Status","Message"} shape is kept for the SDK. Requests that cannot be
// parsed as HTTP at all (a broken request line, headers over 32 KiB) get libmicrohttpd's own 400,
// 414 or 431.
//
// The transport is HttpListener (event loop on `threads` threads): slow clients wait in poll()
// and do not hold the threads that serve worker reports.
//
// With `metrics_listen` set, a second listener (one thread) serves GET /metrics alone, so a
// Prometheus off the node can scrape it while the REST API stays on the node's loopback.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "localcontroller/server/state_view.h"
#include "localcontroller/worker/worker_intake.h"
#include "prometheus/registry.h"

namespace nereid::lc::server {

struct ServerOptions {
  std::string listen = "127.0.0.1:9100";  // port 0 picks a free port (tests)
  size_t max_body_bytes = 1 << 20;
  int threads = 4;
  unsigned max_connections = 4096;  // open at once; also needs as many file descriptors
  absl::Duration idle_timeout = absl::Seconds(10);  // a silent connection is closed after this
  std::string metrics_listen;  // "" = /metrics only on `listen`; else also HOST:PORT, /metrics only
  // Where the per-status-code request counter lives (also served on /metrics); null = private.
  std::shared_ptr<prometheus::Registry> registry;
};

class LcServer {
 public:
  // Binds and starts serving; `view` and `intake` must outlive the server. Errors: InvalidArgument
  // for a bad listen address, Unavailable when the address cannot be bound.
  static absl::StatusOr<std::unique_ptr<LcServer>> Start(const ServerOptions& options,
                                                         StateView* view,
                                                         worker::WorkerIntake* intake);
  ~LcServer();  // Stop()
  LcServer(const LcServer&) = delete;
  LcServer& operator=(const LcServer&) = delete;

  // Stops accepting, closes the connections, joins the listener's threads. Idempotent.
  void Stop();

  int port() const;
  // "http://HOST:PORT" of the listener.
  std::string url() const;
  // The metrics listener's port; 0 without one.
  int metrics_port() const;

 private:
  class Impl;
  explicit LcServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace nereid::lc::server
