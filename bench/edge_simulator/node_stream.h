#pragma once

// One Sync stream of a simulated node: a gRPC callback client reactor with a write queue (gRPC
// allows one write in flight per stream) and a read always pending until the stream ends. It
// knows nothing about the protocol: every message read goes to the Listener, which answers by
// calling Send().
//
// Lifetime: held by shared_ptr (the node's and one the reactor keeps of itself until OnDone), so
// Send() from any thread is safe at any time: once the stream has ended it returns false. No lock
// is held while calling into gRPC (a reaction may run inline in the caller of a Start*).

#include <deque>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/client_context.h"
#include "grpcpp/support/client_callback.h"
#include "nereid/edge/v1/sync.grpc.pb.h"

namespace nereid::bench {

class NodeStream final
    : public grpc::ClientBidiReactor<edge::v1::SyncRequest, edge::v1::SyncResponse>,
      public std::enable_shared_from_this<NodeStream> {
 public:
  class Listener {
   public:
    virtual ~Listener() = default;
    // On a gRPC thread, one message at a time per stream.
    virtual void OnMessage(NodeStream* stream, const edge::v1::SyncResponse& message) = 0;
    // Once, when gRPC is done with the stream (after the last OnMessage). `owner`: the GM's
    // net::kEdgeOwnerTrailer, the replica that serves the node ("" when none).
    virtual void OnEnded(NodeStream* stream, const grpc::Status& status,
                         const std::string& owner) = 0;
  };

  // A stream not started yet: the owner can publish it before any reaction can run.
  static std::shared_ptr<NodeStream> Create(Listener* listener);
  // Starts the call on `stub` with `first` (the Hello) as its first message. Once.
  void Start(edge::v1::EdgeSync::Stub* stub, edge::v1::SyncRequest first);
  NodeStream(const NodeStream&) = delete;
  NodeStream& operator=(const NodeStream&) = delete;

  // Queues a message; false when the stream has ended (the message is dropped).
  bool Send(edge::v1::SyncRequest message);
  // Ends the stream from our side (the node going away); OnEnded follows.
  void Cancel();

  // gRPC reactions.
  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnDone(const grpc::Status& status) override;

  explicit NodeStream(Listener* listener) : listener_(listener) {}  // Use Create().

 private:
  Listener* const listener_;
  grpc::ClientContext context_;
  edge::v1::SyncResponse response_;   // Only touched by the read chain.
  edge::v1::SyncRequest writing_;     // The write in flight.
  std::shared_ptr<NodeStream> self_;  // gRPC's reference, dropped in OnDone.

  absl::Mutex mu_;
  std::deque<edge::v1::SyncRequest> queue_ ABSL_GUARDED_BY(mu_);
  // True from Create until Start's first write is done: Send only queues before Start.
  bool write_in_flight_ ABSL_GUARDED_BY(mu_) = true;
  // The read chain has ended: OnDone may come at any time, no new operation may start unless
  // another one is outstanding.
  bool read_closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace nereid::bench
