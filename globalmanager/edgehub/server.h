#pragma once

// The gRPC server that carries the edge hub, with the GM's --listen/--tls-* options. The GM's
// main builds EdgeHubServerOptions from its flags and starts it; the hub must outlive the server.

#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/net/keepalive.h"
#include "common/net/tls.h"
#include "globalmanager/edgehub/connection_gate.h"
#include "globalmanager/edgehub/edge_hub.h"
#include "globalmanager/edgehub/idle_stream_args.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"

namespace nereid::gm {

struct EdgeHubServerOptions {
  // host:port; port 0 picks a free port (tests). Sedna's GM listens on 9000.
  std::string listen = "0.0.0.0:9000";
  net::TlsOptions tls;  // --tls-ca --tls-cert --tls-key, or --insecure
  net::KeepaliveOptions keepalive;
  IdleStreamOptions idle_streams;
  // How many connections handshake at once, and how long one may wait for its turn
  // (connection_gate.h). max_pending 0: gRPC's own listener, which handshakes every connection at
  // once.
  HandshakeAdmissionOptions handshakes;
  // A Hello carries the node's whole inventory.
  int max_receive_message_bytes = 64 << 20;
};

class EdgeHubServer {
 public:
  // Binds and starts serving `hub`. Fails with a clear error on bad TLS files or a busy address.
  static absl::StatusOr<std::unique_ptr<EdgeHubServer>> Start(EdgeHub* hub,
                                                              const EdgeHubServerOptions& options);
  ~EdgeHubServer();
  EdgeHubServer(const EdgeHubServer&) = delete;
  EdgeHubServer& operator=(const EdgeHubServer&) = delete;

  // Finishes every stream (nodes reconnect to another replica or after restart), then stops the
  // server, cancelling what is still running after `grace`. Idempotent.
  void Stop(absl::Duration grace = absl::Seconds(5));

  int port() const { return port_; }

 private:
  EdgeHubServer(EdgeHub* hub, std::unique_ptr<ConnectionGate> gate,
                std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor> acceptor,
                std::unique_ptr<grpc::Server> server, int port);

  // Every second: ends the streams whose Hello did not come in time.
  void SweepStreams();

  EdgeHub* hub_;
  // The gate hands its connections to the acceptor; both are null with gRPC's own listener.
  std::unique_ptr<ConnectionGate> gate_;
  std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor> acceptor_;
  std::unique_ptr<grpc::Server> server_;
  int port_;
  bool stopped_ = false;
  absl::Mutex sweep_mu_;
  bool sweep_stop_ ABSL_GUARDED_BY(sweep_mu_) = false;
  std::thread sweeper_;
};

}  // namespace nereid::gm
