#include "globalmanager/edgehub/server.h"

#include "absl/strings/str_cat.h"
#include "common/log/log.h"
#include "common/status/macros.h"
#include "globalmanager/edgehub/idle_stream_args.h"
#include "grpcpp/server_builder.h"

namespace nereid::gm {

absl::StatusOr<std::unique_ptr<EdgeHubServer>> EdgeHubServer::Start(
    EdgeHub* hub, const EdgeHubServerOptions& options) {
  if (hub == nullptr) return absl::InvalidArgumentError("EdgeHubServer: no hub");
  ASSIGN_OR_RETURN(std::shared_ptr<grpc::ServerCredentials> creds,
                   net::MakeServerCredentials(options.tls));
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(options.listen, creds, &port);
  builder.SetMaxReceiveMessageSize(options.max_receive_message_bytes);
  net::ApplyServerKeepalive(options.keepalive, builder);
  ApplyIdleStreamArgs(options.idle_streams, builder);
  builder.RegisterService(hub);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    return absl::UnavailableError(
        absl::StrCat("edge hub: cannot listen on ", options.listen, " (address in use?)"));
  }
  LOG(INFO) << "edge hub: serving Sync on " << options.listen << " (port " << port << ", "
            << (options.tls.insecure ? "PLAINTEXT" : "mTLS") << ")";
  return std::unique_ptr<EdgeHubServer>(new EdgeHubServer(hub, std::move(server), port));
}

EdgeHubServer::EdgeHubServer(EdgeHub* hub, std::unique_ptr<grpc::Server> server, int port)
    : hub_(hub), server_(std::move(server)), port_(port) {}

EdgeHubServer::~EdgeHubServer() { Stop(); }

void EdgeHubServer::Stop(absl::Duration grace) {
  if (stopped_) return;
  stopped_ = true;
  hub_->Shutdown();
  server_->Shutdown(absl::ToChronoTime(absl::Now() + grace));
  server_->Wait();
}

}  // namespace nereid::gm
