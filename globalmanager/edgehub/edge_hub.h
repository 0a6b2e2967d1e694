#pragma once

// The GM's edge hub: serves one Sync stream per edge node (proto/nereid/edge/v1/sync.proto) and
// sends each node exactly the objects the controllers want it to hold.
//
//  - Controllers fill a desired-state registry per node with Upsert/Remove from their reconcile
//    threads; these calls never block on a stream (they queue into the node's session).
//  - A node that connects sends its inventory; the hub answers with the difference (upserts for
//    missing/other versions, removes for objects it should no longer hold), then streams changes.
//    Removes are held until MarkSynced(): after a GM start the registry is empty until the
//    controllers have listed everything, and an empty registry must not erase every node.
//  - Node identity comes from the client certificate (CN or DNS SAN); a Hello naming another node
//    is refused with PERMISSION_DENIED. A second stream for a node replaces the first.
//  - Upstream reports go to the ReportHandler only when they are about an object the hub sends to
//    that node; the ReportAck follows the handler's completion (see report_handler.h). The hub
//    holds them within a global bound with a fair share per node and hands them over
//    round-robin across nodes (report_scheduler.h).
//
// Threading: gRPC reactions and controller calls take mu_ briefly; no lock is held while calling
// gRPC, the ReportHandler or the DeliveryListener. Lock order: mu_ -> Session::mu_.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/btree_map.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "common/net/peer_identity.h"
#include "common/time/clock.h"
#include "globalmanager/edgehub/delivery_listener.h"
#include "globalmanager/edgehub/edge_relay.h"
#include "globalmanager/edgehub/hub_metrics.h"
#include "globalmanager/edgehub/lc_versions.h"
#include "globalmanager/edgehub/node_listener.h"
#include "globalmanager/edgehub/node_ownership.h"
#include "globalmanager/edgehub/recent_rate.h"
#include "globalmanager/edgehub/report_handler.h"
#include "globalmanager/edgehub/report_scheduler.h"
#include "globalmanager/edgehub/session.h"
#include "globalmanager/edgehub/stream_peer.h"
#include "nereid/edge/v1/sync.grpc.pb.h"

namespace nereid::gm {

class EdgeHub final : public edge::v1::EdgeSync::CallbackService {
 public:
  struct Options {
    // Changes sent to a node and not yet ACKed.
    std::size_t max_in_flight = 128;
    // Distinct objects queued for one node; beyond it the stream is finished and the node resyncs.
    std::size_t max_queue = 100'000;
    // Reports of one node held or being written; beyond it reports are answered RETRY.
    std::size_t max_pending_reports = 1024;
    // Reports of all nodes held or being written; beyond it, or beyond a node's fair share of it
    // (max_held_reports ÷ (nodes holding reports + 1), at least min_report_share), RETRY (see
    // report_scheduler.h). At the default API limit (500 writes/s) the default is about half a
    // minute of status writes.
    std::size_t max_held_reports = 16'384;
    std::size_t min_report_share = 8;
    // Reports with the ReportHandler at once, taken round-robin over the nodes.
    std::size_t max_reports_dispatched = 256;
    // Sync streams one node connection may hold at once, served here or relayed (a reconnect may
    // overlap the stream it replaces); more are refused with RESOURCE_EXHAUSTED. Streams another
    // replica relays here share that replica's connection and are not counted.
    std::size_t max_streams_per_connection = 8;
    // Only with --insecure (plaintext, no certificates): trust the node name in the Hello.
    bool allow_unauthenticated = false;
    // The certificate GM replicas present when they relay a node's stream (the GM's own, PEM):
    // such a stream speaks for the node named in its metadata (stream_peer.h). "" trusts none.
    std::string relay_certificate;
    // While not accepting streams: relay node streams to the leader through this instead of
    // refusing them (edge_relay.h). Null: refuse, with the owner address as a hint.
    EdgeRelay* relay = nullptr;
    // With edge streams sharded over the replicas: a node another live replica owns is sent there
    // (UNAVAILABLE with its address in net::kEdgeOwnerTrailer) instead of being served here;
    // streams another replica relays here are served whoever owns the node. Null: serve every node.
    const NodeOwnership* ownership = nullptr;
    // A stream whose Hello has not come this long after it opened is ended with
    // DEADLINE_EXCEEDED (EndStreamsWithoutHello). Generous, since a Hello carries the node's
    // whole inventory over what may be a slow link. Zero: no limit.
    absl::Duration hello_timeout = absl::Minutes(2);
    // Whether Hellos are answered from the start (see SetAcceptingStreams).
    bool accept_streams = true;
    std::string gm_version = "nereid-gm";
    Clock* clock = Clock::Real();
    std::shared_ptr<prometheus::Registry> registry;  // null: a private one
    ReportHandler* report_handler = nullptr;         // null: reports are answered RETRY
    DeliveryListener* delivery_listener = nullptr;   // optional
    NodeListener* node_listener = nullptr;           // optional
  };

  struct NodeStatus {
    std::string node;
    bool connected = false;
    std::size_t desired = 0;    // objects the controllers want on the node
    std::size_t queued = 0;     // changes not yet sent
    std::size_t in_flight = 0;  // changes sent, not yet ACKed
    std::size_t pending_reports = 0;
  };

  explicit EdgeHub(Options options);
  ~EdgeHub() override;
  EdgeHub(const EdgeHub&) = delete;
  EdgeHub& operator=(const EdgeHub&) = delete;

  // --- controller API (any thread; never blocks on a stream) ---

  // Wants `node` to hold `resource` (validated: ref, version, spec matching ref.kind). The hub
  // keeps the shared resource itself, so one copy serves every node that holds it.
  absl::Status Upsert(std::string_view node, std::shared_ptr<const edge::v1::Resource> resource);
  absl::Status Upsert(std::string_view node, edge::v1::Resource resource);
  // Wants `node` to no longer hold the object (kind/namespace/name of `ref`).
  absl::Status Remove(std::string_view node, const edge::v1::ObjectRef& ref);
  // The controllers have put every object into the registry: answer held Hellos with removes and
  // start passing reports to the handler.
  void MarkSynced();
  bool synced() const;

  // Finishes every stream with UNAVAILABLE (before shutting the gRPC server down).
  void Shutdown();
  // A GM replica that is not the leader refuses streams with UNAVAILABLE ("not the leader"), so a
  // node retries and lands on the leader; false also finishes the streams open now. The registry
  // and the synced gate are kept.
  void SetAcceptingStreams(bool accepting);
  bool accepting_streams() const;
  // While refusing streams, tell the nodes refused where to dial instead (HOST:PORT of the
  // replica that serves them, in the trailer net::kEdgeOwnerTrailer); "" for no hint.
  void SetOwnerAddress(std::string address);

  // Told gRPC's peer URI of every stream as it opens (EdgeHubServer's connection gate). Set it
  // before serving and clear it after the server has stopped.
  void SetStreamOpenedListener(std::function<void(std::string_view peer)> listener) {
    stream_opened_ = std::move(listener);
  }

  // The nodes whose stream this hub serves, no replica relays here, and is not ending (what
  // ownership moves).
  std::vector<std::string> DirectNodes() const;
  // Ends `node`'s direct stream with UNAVAILABLE and `owner` (HOST:PORT) in the trailer, so the
  // node dials the replica that owns it now. False when the node has no direct stream here, it is
  // ending already, or the node said `owner` did not serve it.
  bool MoveNode(std::string_view node, const std::string& owner);

  // Ends with DEADLINE_EXCEEDED each stream, served here or relayed, whose Hello has not come
  // within hello_timeout of its opening, so a client that opens a stream and never speaks does
  // not hold it, and its connection, for good. EdgeHubServer calls it every second; returns how
  // many it ended.
  int EndStreamsWithoutHello();
  // Streams opened here whose Hello has not come yet (ended or not).
  std::size_t streams_awaiting_hello() const;

  std::vector<NodeStatus> Nodes() const;
  NodeStatus Node(std::string_view node) const;
  HubMetrics& metrics() { return metrics_; }

  // --- gRPC ---
  grpc::ServerBidiReactor<edge::v1::SyncRequest, edge::v1::SyncResponse>* Sync(
      grpc::CallbackServerContext* context) override;

  // Called by the stream reactor (sync_reactor.cc). Returns whether to keep reading.
  bool OnRequest(const std::shared_ptr<Session>& session, const StreamPeer& peer,
                 const edge::v1::SyncRequest& request);
  // `connection`: the peer counted against max_streams_per_connection, "" when not counted.
  void OnSessionDone(const std::shared_ptr<Session>& session, const std::string& connection);

 private:
  struct AwaitingHello {
    std::weak_ptr<Session> session;
    absl::Time opened;
  };
  struct NodeState {
    // Ordered so a resync sends objects in a stable order; a B-tree, whose entries cost about a
    // third of a std::map node's (one entry per object a node holds, 100,000 at 10,000 nodes).
    absl::btree_map<std::string, std::shared_ptr<const edge::v1::Resource>> desired;
    std::shared_ptr<Session> session;
    bool relayed = false;  // the session's stream comes through another replica's relay
    // An owner address that did not serve the node: never moved there again by this session.
    std::string unserved_owner;
    // The LcVersionGauge label of the node's current stream ("" without one).
    std::string lc_version;
  };
  using Dispatch = ReportScheduler::Dispatch;
  // Lets completions that outlive the hub (a slow handler) find out it is gone; the destructor
  // waits for completions running at that moment.
  struct Liveness {
    absl::Mutex mu;
    EdgeHub* hub ABSL_GUARDED_BY(mu) = nullptr;
    int running ABSL_GUARDED_BY(mu) = 0;
  };

  bool HandleHello(const std::shared_ptr<Session>& session, const StreamPeer& peer,
                   const edge::v1::SyncRequest& request);
  void HandleChangeAck(const std::shared_ptr<Session>& session, const edge::v1::ChangeAck& ack);
  void HandleReport(const std::shared_ptr<Session>& session, const edge::v1::StatusReport& report);
  void HandleSummary(const std::shared_ptr<Session>& session, const edge::v1::NodeSummary& summary);
  // Counts the node under `label` (LcVersionGauge::Label; "" while it has no stream) instead of
  // the label it was counted under.
  void SetLcVersionLocked(NodeState& state, std::string label) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Queues for `session` the removes of objects it holds but should not, and the ResyncDone.
  // Returns false when the queue overflowed.
  bool FinishResyncLocked(NodeState& state, uint32_t upserts) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The rejection of a report about an object the hub does not send to `node` (another node's,
  // gone, or re-created), or nullopt when the node may report about it: RefuseForeignReport
  // (report_ownership.h), counted and logged.
  std::optional<ReportOutcome> RefuseForeignLocked(const std::string& node, const NodeState& state,
                                                   const edge::v1::StatusReport& report)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Answers RETRY to a report the scheduler did not admit, and counts it.
  void RefuseReportLocked(NodeState& state, uint64_t seq, ReportScheduler::Admission admission)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Takes from the scheduler what the handler may have now (after the synced gate), answering
  // reports whose object went away meanwhile; sessions with new ReportAcks go to `to_pump`.
  std::vector<Dispatch> TakeReportsLocked(std::vector<std::shared_ptr<Session>>& to_pump)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Answers every report a completion of (node, key, seq) covers; false when it was not pending.
  bool AnswerReportsLocked(const std::string& node, const std::string& key, uint64_t seq,
                           const ReportOutcome& outcome) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SendReportAckLocked(NodeState& state, uint64_t seq, edge::v1::ReportResult result,
                           std::string_view reason, std::string_view message,
                           absl::Duration retry_after = absl::ZeroDuration())
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // When a node refused for a bound may expect room: the time to finish what the hub holds at
  // the rate it finished reports lately (1 s to 5 min); zero when it finished none lately (the
  // API may be down: the LC's own backoff applies).
  absl::Duration RetryAfterLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DispatchReports(std::vector<Dispatch> dispatch);
  void CompleteReport(const std::string& node, const std::string& key, uint64_t seq,
                      ReportOutcome outcome);
  void OverflowLocked(NodeState& state) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A stream counted against max_streams_per_connection ended ("" = not counted).
  void ReleaseConnectionStream(const std::string& connection);
  void ReleaseConnectionStreamLocked(const std::string& connection)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  NodeStatus StatusOfLocked(const std::string& node, const NodeState& state) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  const RelayTrust relay_trust_;
  HubMetrics metrics_;
  LcVersionGauge lc_versions_ ABSL_GUARDED_BY(mu_);
  std::function<void(std::string_view peer)> stream_opened_;
  std::shared_ptr<Liveness> liveness_;

  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, NodeState> nodes_ ABSL_GUARDED_BY(mu_);
  int connected_ ABSL_GUARDED_BY(mu_) = 0;  // nodes_ with a session
  // Streams opened here whose Hello has not come yet, by session id.
  absl::flat_hash_map<uint64_t, AwaitingHello> awaiting_hello_ ABSL_GUARDED_BY(mu_);
  // Object key -> number of nodes whose registry holds it (tells "another node's object" apart
  // from "object gone" when refusing a report).
  absl::flat_hash_map<std::string, int> owners_ ABSL_GUARDED_BY(mu_);
  // gRPC peer URI of a node connection -> its streams now.
  absl::flat_hash_map<std::string, std::size_t> streams_per_connection_ ABSL_GUARDED_BY(mu_);
  ReportScheduler reports_ ABSL_GUARDED_BY(mu_);
  RecentRate reports_finished_ ABSL_GUARDED_BY(mu_);  // reports answered after the handler
  bool synced_ ABSL_GUARDED_BY(mu_) = false;
  bool shutting_down_ ABSL_GUARDED_BY(mu_) = false;
  bool accepting_ ABSL_GUARDED_BY(mu_) = true;
  std::string owner_address_ ABSL_GUARDED_BY(mu_);
  uint64_t next_session_id_ ABSL_GUARDED_BY(mu_) = 1;
};

}  // namespace nereid::gm
