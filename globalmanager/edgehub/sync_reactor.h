#pragma once

// The gRPC reactor of one Sync stream: turns stream events into hub calls and lets the session
// write. Reactions never block: they parse, hand the message to the hub (which only takes short
// locks and queues), and start the next read or write. Owned by gRPC: deleted in OnDone.

#include <memory>
#include <string>

#include "globalmanager/edgehub/session.h"
#include "globalmanager/edgehub/stream_peer.h"
#include "grpcpp/support/server_callback.h"
#include "nereid/edge/v1/sync.pb.h"

namespace grpc {
class CallbackServerContext;
}

namespace nereid::gm {

class EdgeHub;

class SyncReactor final
    : public grpc::ServerBidiReactor<edge::v1::SyncRequest, edge::v1::SyncResponse>,
      public SessionTransport {
 public:
  // `peer`: whom the stream speaks for (stream_peer.h); `connection`: the peer URI counted against
  // the hub's streams per connection, "" when not counted.
  SyncReactor(EdgeHub* hub, grpc::CallbackServerContext* context, std::shared_ptr<Session> session,
              StreamPeer peer, std::string connection);

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

  // SessionTransport
  void Write(const edge::v1::SyncResponse* message) override { StartWrite(message); }
  void End(grpc::Status status, const std::string& owner) override;

 private:
  EdgeHub* const hub_;
  grpc::CallbackServerContext* const context_;
  const std::shared_ptr<Session> session_;
  const StreamPeer peer_;
  const std::string connection_;
  edge::v1::SyncRequest request_;
};

// A stream ended at once with `status`, before anything is read.
class RefusedStream final
    : public grpc::ServerBidiReactor<edge::v1::SyncRequest, edge::v1::SyncResponse> {
 public:
  explicit RefusedStream(grpc::Status status) { Finish(std::move(status)); }
  void OnDone() override { delete this; }
};

}  // namespace nereid::gm
