#include "globalmanager/edgehub/server.h"

#include "absl/strings/str_cat.h"
#include "common/log/log.h"
#include "common/status/macros.h"
#include "globalmanager/edgehub/idle_stream_args.h"

namespace nereid::gm {

absl::StatusOr<std::unique_ptr<EdgeHubServer>> EdgeHubServer::Start(
    EdgeHub* hub, const EdgeHubServerOptions& options) {
  if (hub == nullptr) return absl::InvalidArgumentError("EdgeHubServer: no hub");
  ASSIGN_OR_RETURN(std::shared_ptr<grpc::ServerCredentials> creds,
                   net::MakeServerCredentials(options.tls));
  grpc::ServerBuilder builder;
  int port = 0;
  std::unique_ptr<ConnectionGate> gate;
  std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor> acceptor;
  if (options.handshakes.max_pending > 0) {
    ASSIGN_OR_RETURN(gate, ConnectionGate::Listen(options.listen, options.handshakes,
                                                  options.keepalive.timeout, &hub->metrics()));
    port = gate->port();
    acceptor = builder.experimental().AddExternalConnectionAcceptor(
        grpc::ServerBuilder::experimental_type::ExternalConnectionType::FROM_FD, creds);
  } else {
    builder.AddListeningPort(options.listen, creds, &port);
  }
  builder.SetMaxReceiveMessageSize(options.max_receive_message_bytes);
  net::ApplyServerKeepalive(options.keepalive, builder);
  ApplyIdleStreamArgs(options.idle_streams, builder);
  builder.RegisterService(hub);
  if (gate != nullptr) {
    hub->SetStreamOpenedListener(
        [gate = gate.get()](std::string_view peer) { gate->StreamOpened(peer); });
  }
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    hub->SetStreamOpenedListener(nullptr);
    return absl::UnavailableError(
        absl::StrCat("edge hub: cannot listen on ", options.listen, " (address in use?)"));
  }
  if (gate != nullptr) {
    gate->Start([acceptor = acceptor.get()](int listener_fd, int fd) {
      grpc::experimental::ExternalConnectionAcceptor::NewConnectionParameters connection;
      connection.listener_fd = listener_fd;
      connection.fd = fd;
      acceptor->HandleNewConnection(&connection);
    });
  }
  LOG(INFO) << "edge hub: serving Sync on " << options.listen << " (port " << port << ", "
            << (options.tls.insecure ? "PLAINTEXT" : "mTLS") << ", "
            << (gate != nullptr ? absl::StrCat("at most ", options.handshakes.max_pending,
                                               " handshakes at once")
                                : std::string("gRPC's listener"))
            << ")";
  return std::unique_ptr<EdgeHubServer>(new EdgeHubServer(
      hub, std::move(gate), std::move(acceptor), std::move(server), port));
}

EdgeHubServer::EdgeHubServer(
    EdgeHub* hub, std::unique_ptr<ConnectionGate> gate,
    std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor> acceptor,
    std::unique_ptr<grpc::Server> server, int port)
    : hub_(hub),
      gate_(std::move(gate)),
      acceptor_(std::move(acceptor)),
      server_(std::move(server)),
      port_(port),
      sweeper_([this] { SweepStreams(); }) {}

void EdgeHubServer::SweepStreams() {
  for (;;) {
    {
      absl::MutexLock lock(&sweep_mu_);
      if (sweep_mu_.AwaitWithTimeout(absl::Condition(&sweep_stop_), absl::Seconds(1))) return;
    }
    hub_->EndStreamsWithoutHello();
  }
}

EdgeHubServer::~EdgeHubServer() { Stop(); }

void EdgeHubServer::Stop(absl::Duration grace) {
  if (stopped_) return;
  stopped_ = true;
  {
    absl::MutexLock lock(&sweep_mu_);
    sweep_stop_ = true;
  }
  sweeper_.join();
  if (gate_ != nullptr) gate_->Stop();  // no new connections: nodes go to another replica
  hub_->Shutdown();
  server_->Shutdown(absl::ToChronoTime(absl::Now() + grace));
  server_->Wait();
  hub_->SetStreamOpenedListener(nullptr);
}

}  // namespace nereid::gm
