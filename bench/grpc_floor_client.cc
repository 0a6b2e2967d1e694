// The baseline of lc_memory_bench: the least any gRPC-based LocalController pays in resident
// memory. It links the same gRPC, OpenSSL, Abseil and protobuf-lite shared libraries as the LC and
// does only what the LC's cloud link does on the wire: dial the GM over mutual TLS, open the Sync
// stream with a Hello, read until the stream ends, retry after a second. No database, no REST, no
// dataset counting, no metrics.
//
//   grpc_floor_client --node NAME --gm HOST:PORT (--tls-ca F --tls-cert F --tls-key F | --insecure)
//
// Runs until SIGTERM or SIGINT and then exits 0.

#include <signal.h>

#include <atomic>
#include <chrono>
#include <iostream>
#include <string>
#include <thread>

#include "common/net/edge_protocol.h"
#include "common/net/tls.h"
#include "grpcpp/grpcpp.h"
#include "nereid/edge/v1/sync.grpc.pb.h"

namespace {

namespace v1 = nereid::edge::v1;

std::atomic<bool> stopping{false};

void OnSignal(int) { stopping = true; }

// One Sync stream: Hello, then read until the GM or the network ends it.
void RunStream(const std::string& node, const std::string& gm,
               const std::shared_ptr<grpc::ChannelCredentials>& credentials) {
  auto stub = v1::EdgeSync::NewStub(grpc::CreateChannel(gm, credentials));
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReaderWriter<v1::SyncRequest, v1::SyncResponse>> stream =
      stub->Sync(&context);
  v1::SyncRequest hello;
  hello.mutable_hello()->set_node_name(node);
  hello.mutable_hello()->set_protocol_version(nereid::net::kEdgeProtocolVersion);
  if (!stream->Write(hello)) return;
  // Read blocks; a watcher cancels the stream when a signal asks us to stop.
  std::atomic<bool> ended{false};
  std::thread watcher([&] {
    while (!stopping && !ended) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    context.TryCancel();
  });
  v1::SyncResponse response;
  while (stream->Read(&response)) {
  }
  ended = true;
  watcher.join();
  stream->Finish().ok();
}

}  // namespace

int main(int argc, char** argv) {
  std::string node;
  std::string gm;
  nereid::net::TlsOptions tls;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--insecure") {
      tls.insecure = true;
    } else if (arg == "--node" && has_value) {
      node = argv[++i];
    } else if (arg == "--gm" && has_value) {
      gm = argv[++i];
    } else if (arg == "--tls-ca" && has_value) {
      tls.ca_file = argv[++i];
    } else if (arg == "--tls-cert" && has_value) {
      tls.cert_file = argv[++i];
    } else if (arg == "--tls-key" && has_value) {
      tls.key_file = argv[++i];
    } else {
      std::cerr << "usage: grpc_floor_client --node NAME --gm HOST:PORT "
                   "(--tls-ca F --tls-cert F --tls-key F | --insecure)\n";
      return 2;
    }
  }
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
      nereid::net::MakeChannelCredentials(tls);
  if (!credentials.ok()) {
    std::cerr << credentials.status() << "\n";
    return 1;
  }
  signal(SIGTERM, OnSignal);
  signal(SIGINT, OnSignal);
  while (!stopping) {
    RunStream(node, gm, *credentials);
    for (int i = 0; i < 10 && !stopping; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  return 0;
}
