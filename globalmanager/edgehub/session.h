#pragma once

// One node's Sync stream as the hub sees it: what the node holds (its inventory plus every change
// queued or sent since), the coalescing queue of changes not yet sent, the changes sent and not yet
// ACKed, control messages (HelloReply, ReportAcks), and the single-write-in-flight pump that moves
// them onto the stream.
//
// Locking: the hub calls the Enqueue*/Holds/NeedsUpsert family with its own lock held (lock order
// hub -> session); nothing here calls back into the hub. Pump() starts gRPC operations and must be
// called with no lock held; it never blocks.

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/time/clock.h"
#include "globalmanager/edgehub/coalescing_queue.h"
#include "globalmanager/edgehub/node_queue_depths.h"
#include "grpcpp/support/status.h"
#include "nereid/edge/v1/sync.pb.h"

namespace nereid::gm {

// The gRPC side of a session (implemented by SyncReactor): start one write, or finish the stream.
class SessionTransport {
 public:
  virtual ~SessionTransport() = default;
  virtual void Write(const edge::v1::SyncResponse* message) = 0;
  // `owner`: where the node should dial instead (net::kEdgeOwnerTrailer), or "".
  virtual void End(grpc::Status status, const std::string& owner) = 0;
};

class Session {
 public:
  struct Options {
    std::size_t max_in_flight = 128;  // changes sent and not yet ACKed
    std::size_t max_queue = 100'000;  // distinct objects queued and not yet sent
    Clock* clock = Clock::Real();
  };

  // The result of an ACK/NACK that matched a sent change.
  struct AckedChange {
    edge::v1::ObjectRef ref;
    std::string version;
    bool removed = false;
    absl::Duration latency;  // = queued + writing + at_node
    // Where the latency went: waiting in this session's queue until its write started; the gRPC
    // write until done (flow control, TLS, the socket); from then to the ACK read (the network,
    // the node, and the GM's read of the ACK). at_node is zero if the write never completed.
    absl::Duration queued;
    absl::Duration writing;
    absl::Duration at_node;
  };

  Session(Options options, uint64_t id);
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  uint64_t id() const { return id_; }

  // --- lifecycle (reactor) ---
  void Attach(SessionTransport* transport);
  // OnDone: no more gRPC operations on this stream.
  void Detach();
  void OnWriteDone(bool ok);
  // Finishes the stream once the write in flight (if any) is done; the first status wins (true
  // when it is this one). `owner`: the replica the node should dial instead (a trailer), or "".
  bool RequestFinish(grpc::Status status, std::string owner = "");
  // Starts the next write (control messages first, then changes while the in-flight window has
  // room) or the pending Finish. Call with no lock held.
  void Pump();
  bool finishing() const;
  grpc::Status finish_status() const;
  // The replica the node was sent to when the stream finished ("" when none).
  std::string finish_owner() const;

  // --- established by the Hello (hub, under its lock) ---
  // Records the node and what it holds; queues the HelloReply. The queue's length is reported to
  // `depths` (may be null) from here until ReleaseQueueDepth.
  void Establish(const std::string& node, NodeQueueDepths* depths, const edge::v1::Hello& hello,
                 edge::v1::SyncResponse hello_reply);
  // The stream is done: its queue no longer counts in the depths. Idempotent.
  void ReleaseQueueDepth();
  bool established() const;
  const std::string& node() const { return node_; }  // set once by Establish, before sharing

  // Whether the node, once it has applied everything queued, would hold `resource` at another
  // version or uid than wanted (or not at all).
  bool NeedsUpsert(const std::string& key, const edge::v1::Resource& resource) const;
  // Whether the node holds (or will hold) `key`.
  bool Holds(const std::string& key) const;
  std::vector<std::string> HeldKeys() const;

  // Queue changes; false when the queue is full (the caller finishes the stream: the node resyncs
  // from its inventory when it reconnects, so nothing is lost).
  bool EnqueueUpsert(const std::string& key, std::shared_ptr<const edge::v1::Resource> resource);
  bool EnqueueRemove(const std::string& key, const edge::v1::ObjectRef& ref);
  // Marks the end of the difference sent in answer to the Hello.
  bool EnqueueResyncDone(uint32_t upserts, uint32_t removes);
  void EnqueueControl(edge::v1::SyncResponse message);

  // Matches an ACK/NACK to the change it answers; nullopt for an unknown nonce.
  std::optional<AckedChange> OnChangeAck(const edge::v1::ChangeAck& ack);

  // True until ResyncDone has been queued (the hub holds removes until it has synced).
  bool resync_pending() const;

  std::size_t queued() const;
  std::size_t in_flight() const;

 private:
  struct Held {
    std::string uid;
    std::string version;
  };
  struct Queued {
    enum class Type { kUpsert, kRemove, kResyncDone };
    Type type = Type::kUpsert;
    std::shared_ptr<const edge::v1::Resource> resource;  // kUpsert
    edge::v1::ObjectRef ref;                             // kRemove
    std::string version;                                 // kRemove: version the node holds
    uint32_t upserts = 0;                                // kResyncDone
    uint32_t removes = 0;
    absl::Time enqueued;  // first enqueue while unsent
  };
  struct Sent {
    edge::v1::ObjectRef ref;
    std::string version;
    bool removed = false;
    absl::Time enqueued;
    absl::Time write_started;
    absl::Time written = absl::InfinitePast();  // until OnWriteDone
  };

  bool PushLocked(const std::string& key, Queued entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void UpdateDepthLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  const uint64_t id_;
  std::string node_;

  mutable absl::Mutex mu_;
  NodeQueueDepths* depths_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::size_t reported_depth_ ABSL_GUARDED_BY(mu_) = 0;  // What depths_ counts for us.
  SessionTransport* transport_ ABSL_GUARDED_BY(mu_) = nullptr;
  bool established_ ABSL_GUARDED_BY(mu_) = false;
  bool resync_pending_ ABSL_GUARDED_BY(mu_) = true;
  absl::flat_hash_map<std::string, Held> held_ ABSL_GUARDED_BY(mu_);
  CoalescingQueue<Queued> queue_ ABSL_GUARDED_BY(mu_);
  std::deque<edge::v1::SyncResponse> control_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<uint64_t, Sent> sent_ ABSL_GUARDED_BY(mu_);
  uint64_t next_nonce_ ABSL_GUARDED_BY(mu_) = 1;
  bool write_in_flight_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t writing_nonce_ ABSL_GUARDED_BY(mu_) = 0;  // the change in out_; 0 for control messages
  bool finish_requested_ ABSL_GUARDED_BY(mu_) = false;
  bool finish_started_ ABSL_GUARDED_BY(mu_) = false;
  grpc::Status finish_status_ ABSL_GUARDED_BY(mu_);
  std::string finish_owner_ ABSL_GUARDED_BY(mu_);
  // The message being written; stays untouched until OnWriteDone (gRPC's rule).
  // Written under mu_ only while write_in_flight_ is false.
  edge::v1::SyncResponse out_;
};

}  // namespace nereid::gm
