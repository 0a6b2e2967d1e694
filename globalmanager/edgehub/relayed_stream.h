#pragma once

// One node's Sync stream relayed by a replica that does not lead to the leader's hub: the node's
// stream (a server call on this replica) and the leader's (a client call on the relay's shared
// channel to the leader, carrying kRelayedNodeMetadata) joined message for message.
//
//  - The node's first message must pass CheckHello here; the leader checks it again.
//  - One message in flight per direction: the next read on one side starts when the write on the
//    other side is done, so a slow node or leader holds the other back instead of filling memory.
//  - Either side ending ends both. The node gets the leader's status and trailers; if the leader
//    call ended without answering (the leader is unreachable or refused the relay's certificate),
//    the node gets UNAVAILABLE with the leader's address in kEdgeOwnerTrailer, so it dials the
//    leader itself: a failed relay falls back to the redirect.
//
// Lifetime: gRPC owns the two reactors (each deletes itself in its OnDone); both hold this shared
// state. The node side starts operations on the leader call only under a hold on that call, so it
// cannot be deleted meanwhile; the leader side's operations on the node call all happen before the
// node call's Finish, which only the leader side's OnDone (or an ending before the leader call
// exists) issues. No lock is held while calling gRPC.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/net/peer_identity.h"
#include "globalmanager/edgehub/node_ownership.h"
#include "grpcpp/support/server_callback.h"
#include "nereid/edge/v1/sync.grpc.pb.h"

namespace grpc {
class CallbackServerContext;
}

namespace nereid::gm {

using NodeStreamReactor = grpc::ServerBidiReactor<edge::v1::SyncRequest, edge::v1::SyncResponse>;

class RelayedStream : public std::enable_shared_from_this<RelayedStream> {
 public:
  struct Upstream {
    std::shared_ptr<edge::v1::EdgeSync::Stub> stub;  // a channel to the leader's hub
    std::string address;                             // its HOST:PORT, the fallback for the node
  };
  struct Hooks {
    bool allow_unauthenticated = false;  // --insecure: trust the Hello's claim without certificate
    // Edge shards: a node another live replica owns is sent there after its Hello, not relayed.
    const NodeOwnership* ownership = nullptr;
    std::string unserved_owner;  // an owner address that did not serve the node: relay instead
    std::function<void()> on_redirected;  // a node sent to its owner
    // The leader call ended by itself (not because the node left or Cancel); `answered`: it had
    // sent at least one message.
    std::function<void(bool answered)> on_upstream_done;
    // Both calls are over; the stream's last callback.
    std::function<void()> on_done;
  };

  // Starts relaying the stream of `context`; the reactor returned is gRPC's.
  static std::pair<std::shared_ptr<RelayedStream>, NodeStreamReactor*> Start(
      grpc::CallbackServerContext* context, net::PeerIdentity peer, Upstream upstream,
      Hooks hooks);

  // Ends the relayed stream with `status` for the node (which redials; at once at `owner`, a
  // HOST:PORT for net::kEdgeOwnerTrailer, when given). Any thread.
  void Cancel(grpc::Status status, std::string owner = "");
  // The node the stream relays for: "" before its Hello passed and once it is ending.
  std::string node() const;
  // Ends the stream with `status` if the node's Hello has not passed yet and it is not ending;
  // returns whether it did. One step, so a Hello passing meanwhile keeps its stream.
  bool CancelIfAwaitingHello(grpc::Status status);
  // An owner address that did not serve the node (it is not moved there).
  const std::string& unserved_owner() const { return hooks_.unserved_owner; }

  RelayedStream(net::PeerIdentity peer, Upstream upstream, Hooks hooks);  // via Start
  ~RelayedStream();

 private:
  class NodeSide;
  class LeaderSide;
  struct Ending {
    grpc::Status status;
    std::string owner;  // for kEdgeOwnerTrailer
  };

  // From the node side.
  void OnHello(const edge::v1::SyncRequest* hello);
  void ForwardUp(const edge::v1::SyncRequest* request);
  void OnNodeWriteDone(bool ok);
  void OnNodeGone(grpc::Status status);
  void OnNodeDone();
  // From the leader side.
  void OnLeaderWriteDone(bool ok);
  void ForwardDown(const edge::v1::SyncResponse* response);
  void OnLeaderDone(grpc::Status status, std::string owner, bool answered);

  // A leader call the node side may start an operation on, or null when it is closing; every
  // non-null result is followed by EndLeaderOp.
  LeaderSide* BeginLeaderOp();
  void EndLeaderOp();
  // No more operations from the node side on the leader call: releases its hold once the
  // operations being started are done, so the leader call can end.
  void CloseLeader();
  void CancelLeader();
  void FinishNode(Ending ending);

  const net::PeerIdentity peer_;
  const Upstream upstream_;
  const Hooks hooks_;
  NodeSide* node_ = nullptr;  // set by Start; valid until the node side's OnDone
  // The message each direction has in flight (one at a time), kept here so it outlives a write
  // started on the other side.
  edge::v1::SyncRequest request_;
  edge::v1::SyncResponse response_;

  mutable absl::Mutex mu_;
  std::string node_name_ ABSL_GUARDED_BY(mu_);
  LeaderSide* leader_ ABSL_GUARDED_BY(mu_) = nullptr;
  bool leader_open_ ABSL_GUARDED_BY(mu_) = false;  // the node side's hold on the leader call
  int leader_ops_ ABSL_GUARDED_BY(mu_) = 0;        // operations being started on it outside mu_
  bool upstream_started_ ABSL_GUARDED_BY(mu_) = false;  // the Hello passed: a leader call exists
  bool node_gone_ ABSL_GUARDED_BY(mu_) = false;
  bool node_writing_ ABSL_GUARDED_BY(mu_) = false;
  bool finish_called_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<Ending> ending_ ABSL_GUARDED_BY(mu_);      // Finish deferred behind a write
  std::optional<Ending> cancelled_ ABSL_GUARDED_BY(mu_);  // Cancel's ending, if any
};

}  // namespace nereid::gm
