#include "globalmanager/edgehub/edge_hub.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/log/log.h"
#include "common/net/edge_protocol.h"
#include "common/strings/absl_compat.h"
#include "globalmanager/edgehub/sync_reactor.h"

namespace nereid::gm {

namespace v1 = edge::v1;

namespace {

grpc::Status GrpcError(grpc::StatusCode code, std::string message) {
  return grpc::Status(code, std::move(message));
}

}  // namespace

EdgeHub::EdgeHub(Options options)
    : options_(std::move(options)),
      relay_trust_(options_.relay_certificate),
      metrics_(options_.registry),
      lc_versions_(metrics_.registry()),
      liveness_(std::make_shared<Liveness>()),
      reports_(ReportScheduler::Options{options_.max_pending_reports, options_.max_held_reports,
                                        options_.min_report_share,
                                        options_.max_reports_dispatched}),
      reports_finished_(options_.clock) {
  absl::MutexLock lock(&liveness_->mu);
  liveness_->hub = this;
  absl::MutexLock hub_lock(&mu_);
  accepting_ = options_.accept_streams;
}

EdgeHub::~EdgeHub() {
  // Waits for completions running right now; later ones find the hub gone and drop their ACK
  // (the node resends the report after it reconnects).
  absl::MutexLock lock(&liveness_->mu);
  liveness_->hub = nullptr;
  liveness_->mu.Await(absl::Condition(
      +[](int* running) { return *running == 0; }, &liveness_->running));
}

// ---------------------------------------------------------------------------------------------
// Controller API

absl::Status EdgeHub::Upsert(std::string_view node, v1::Resource resource) {
  return Upsert(node, std::make_shared<const v1::Resource>(std::move(resource)));
}

absl::Status EdgeHub::Upsert(std::string_view node, std::shared_ptr<const v1::Resource> shared) {
  if (node.empty()) return absl::InvalidArgumentError("Upsert: empty node name");
  if (shared == nullptr) return absl::InvalidArgumentError("Upsert: no resource");
  if (absl::Status status = net::ValidateResource(*shared); !status.ok()) return status;
  const std::string key = net::ObjectKey(shared->ref());
  std::shared_ptr<Session> to_pump;
  {
    absl::MutexLock lock(&mu_);
    NodeState& state = nodes_[ToAbsl(node)];
    auto [it, inserted] = state.desired.try_emplace(key);
    if (inserted) ++owners_[key];
    it->second = shared;
    Session* session = state.session.get();
    if (session != nullptr && session->established() && session->NeedsUpsert(key, *shared)) {
      if (!session->EnqueueUpsert(key, shared)) OverflowLocked(state);
      to_pump = state.session;
    }
  }
  if (to_pump) to_pump->Pump();
  return absl::OkStatus();
}

absl::Status EdgeHub::Remove(std::string_view node, const v1::ObjectRef& ref) {
  if (node.empty()) return absl::InvalidArgumentError("Remove: empty node name");
  if (absl::Status status = net::ValidateRef(ref); !status.ok()) return status;
  const std::string key = net::ObjectKey(ref);
  std::shared_ptr<Session> to_pump;
  {
    absl::MutexLock lock(&mu_);
    auto node_it = nodes_.find(ToAbsl(node));
    if (node_it == nodes_.end()) return absl::OkStatus();
    NodeState& state = node_it->second;
    v1::ObjectRef full_ref = ref;
    if (auto it = state.desired.find(key); it != state.desired.end()) {
      full_ref = it->second->ref();
      state.desired.erase(it);
      if (auto owner = owners_.find(key); owner != owners_.end() && --owner->second <= 0) {
        owners_.erase(owner);
      }
    }
    Session* session = state.session.get();
    if (session != nullptr && session->established() && session->Holds(key)) {
      if (!session->EnqueueRemove(key, full_ref)) OverflowLocked(state);
      to_pump = state.session;
    }
  }
  if (to_pump) to_pump->Pump();
  return absl::OkStatus();
}

void EdgeHub::MarkSynced() {
  std::vector<std::shared_ptr<Session>> to_pump;
  std::vector<Dispatch> dispatch;
  std::size_t resyncs = 0;
  {
    absl::MutexLock lock(&mu_);
    if (synced_) return;
    synced_ = true;
    for (auto& [node, state] : nodes_) {
      if (state.session != nullptr && state.session->established() &&
          state.session->resync_pending()) {
        if (!FinishResyncLocked(state, 0)) OverflowLocked(state);
        to_pump.push_back(state.session);
      }
    }
    resyncs = to_pump.size();
    // Reports held until now go to the handler (or are refused when their object is not the
    // node's); their ReportAcks go out with the pumps below.
    dispatch = TakeReportsLocked(to_pump);
  }
  LOG(INFO) << "edge hub: registry synced; resyncing " << resyncs << " waiting streams";
  for (auto& session : to_pump) session->Pump();
  DispatchReports(std::move(dispatch));
}

bool EdgeHub::synced() const {
  absl::MutexLock lock(&mu_);
  return synced_;
}

void EdgeHub::Shutdown() {
  std::vector<std::shared_ptr<Session>> sessions;
  {
    absl::MutexLock lock(&mu_);
    shutting_down_ = true;
    for (auto& [node, state] : nodes_) {
      if (state.session != nullptr) sessions.push_back(state.session);
    }
  }
  for (auto& session : sessions) {
    session->RequestFinish(GrpcError(grpc::StatusCode::UNAVAILABLE, "GM shutting down"));
    session->Pump();
  }
}

void EdgeHub::SetAcceptingStreams(bool accepting) {
  std::vector<std::shared_ptr<Session>> sessions;
  {
    absl::MutexLock lock(&mu_);
    if (accepting_ == accepting) return;
    accepting_ = accepting;
    if (!accepting) {
      metrics_.disconnected_nodes().Clear();
      for (auto& [node, state] : nodes_) {
        if (state.session != nullptr) sessions.push_back(state.session);
      }
    }
  }
  LOG(INFO) << "edge hub: " << (accepting ? "accepting" : "refusing") << " node streams";
  for (auto& session : sessions) {
    session->RequestFinish(GrpcError(grpc::StatusCode::UNAVAILABLE, "GM is not the leader"));
    session->Pump();
  }
}

void EdgeHub::SetOwnerAddress(std::string address) {
  absl::MutexLock lock(&mu_);
  owner_address_ = std::move(address);
}

bool EdgeHub::accepting_streams() const {
  absl::MutexLock lock(&mu_);
  return accepting_;
}

std::vector<std::string> EdgeHub::DirectNodes() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> nodes;
  for (const auto& [node, state] : nodes_) {
    if (state.session != nullptr && state.session->established() && !state.relayed &&
        !state.session->finishing()) {
      nodes.push_back(node);
    }
  }
  return nodes;
}

bool EdgeHub::MoveNode(std::string_view node, const std::string& owner) {
  std::shared_ptr<Session> session;
  {
    absl::MutexLock lock(&mu_);
    auto it = nodes_.find(ToAbsl(node));
    if (it == nodes_.end() || it->second.session == nullptr || it->second.relayed ||
        it->second.session->finishing() || it->second.unserved_owner == owner) {
      return false;  // not here, relayed here, already ending, or the owner did not serve it
    }
    session = it->second.session;
  }
  session->RequestFinish(
      GrpcError(grpc::StatusCode::UNAVAILABLE,
                absl::StrCat("node ", ToAbsl(node), " moves to the GM replica at ", owner)),
      owner);
  session->Pump();
  return true;
}

std::vector<EdgeHub::NodeStatus> EdgeHub::Nodes() const {
  absl::MutexLock lock(&mu_);
  std::vector<NodeStatus> out;
  out.reserve(nodes_.size());
  for (const auto& [node, state] : nodes_) out.push_back(StatusOfLocked(node, state));
  return out;
}

EdgeHub::NodeStatus EdgeHub::Node(std::string_view node) const {
  absl::MutexLock lock(&mu_);
  auto it = nodes_.find(ToAbsl(node));
  if (it == nodes_.end()) return NodeStatus{std::string(node)};
  return StatusOfLocked(it->first, it->second);
}

EdgeHub::NodeStatus EdgeHub::StatusOfLocked(const std::string& node, const NodeState& state) const {
  NodeStatus status;
  status.node = node;
  status.connected = state.session != nullptr && state.session->established();
  status.desired = state.desired.size();
  if (state.session != nullptr) {
    status.queued = state.session->queued();
    status.in_flight = state.session->in_flight();
  }
  status.pending_reports = reports_.held(node);
  return status;
}

// ---------------------------------------------------------------------------------------------
// Streams

grpc::ServerBidiReactor<v1::SyncRequest, v1::SyncResponse>* EdgeHub::Sync(
    grpc::CallbackServerContext* context) {
  if (stream_opened_) stream_opened_(context->peer());
  StreamPeer peer = ResolveStreamPeer(*context, relay_trust_, options_.allow_unauthenticated);
  // A node connection's streams are counted whoever serves them, here or through the relay.
  std::string connection;
  bool relay;
  uint64_t id = 0;
  {
    absl::MutexLock lock(&mu_);
    if (!peer.relayed && !context->peer().empty()) {
      connection = context->peer();
      std::size_t& streams = streams_per_connection_[connection];
      if (streams >= options_.max_streams_per_connection) {
        return new RefusedStream(GrpcError(
            grpc::StatusCode::RESOURCE_EXHAUSTED,
            absl::StrCat("at most ", options_.max_streams_per_connection,
                         " Sync streams per connection")));
      }
      ++streams;
    }
    relay = options_.relay != nullptr && !accepting_ && !shutting_down_ && !peer.relayed;
    if (!relay) id = next_session_id_++;
  }
  if (relay) {
    // Unlocked: the relay has its own lock, and a relayed stream touches the hub only when done.
    NodeStreamReactor* relayed = options_.relay->Relay(
        context, peer.identity, peer.unserved_owner, options_.allow_unauthenticated,
        [this, connection] { ReleaseConnectionStream(connection); });
    if (relayed != nullptr) return relayed;
    absl::MutexLock lock(&mu_);
    id = next_session_id_++;
  }
  Session::Options session_options;
  session_options.max_in_flight = options_.max_in_flight;
  session_options.max_queue = options_.max_queue;
  session_options.clock = options_.clock;
  auto session = std::make_shared<Session>(session_options, id);
  if (options_.hello_timeout > absl::ZeroDuration()) {
    absl::MutexLock lock(&mu_);
    awaiting_hello_.emplace(id, AwaitingHello{session, options_.clock->Now()});
  }
  return new SyncReactor(this, context, std::move(session), std::move(peer),
                         std::move(connection));
}

bool EdgeHub::OnRequest(const std::shared_ptr<Session>& session, const StreamPeer& peer,
                        const v1::SyncRequest& request) {
  if (!session->established()) return HandleHello(session, peer, request);
  switch (request.message_case()) {
    case v1::SyncRequest::kChangeAck: HandleChangeAck(session, request.change_ack()); return true;
    case v1::SyncRequest::kReport: HandleReport(session, request.report()); return true;
    case v1::SyncRequest::kSummary: HandleSummary(session, request.summary()); return true;
    case v1::SyncRequest::kHello:
      session->RequestFinish(GrpcError(grpc::StatusCode::INVALID_ARGUMENT,
                                       "Hello may only be the first message of a stream"));
      return false;
    case v1::SyncRequest::MESSAGE_NOT_SET: break;
  }
  session->RequestFinish(GrpcError(grpc::StatusCode::INVALID_ARGUMENT,
                                   "empty or unknown SyncRequest (newer client?)"));
  return false;
}

bool EdgeHub::HandleHello(const std::shared_ptr<Session>& session, const StreamPeer& peer,
                          const v1::SyncRequest& request) {
  grpc::Status check = CheckHello(request, peer.identity, options_.allow_unauthenticated);
  if (!check.ok()) {
    if (check.error_code() == grpc::StatusCode::PERMISSION_DENIED) {
      metrics_.refused_identities().Increment();
      LOG(WARNING) << "edge hub: refused stream claiming node " << request.hello().node_name()
                   << " from " << peer.identity.DebugString();
    }
    session->RequestFinish(std::move(check));
    return false;
  }
  const v1::Hello& hello = request.hello();
  const std::string& node = hello.node_name();
  if (options_.allow_unauthenticated && !peer.identity.authenticated) {
    LOG(WARNING) << "edge hub: node " << node << " connected WITHOUT a certificate (--insecure)";
  }

  // Asked before taking mu_, so the ownership's own lock never nests in the hub's.
  std::string owner = peer.relayed || options_.ownership == nullptr
                          ? std::string()
                          : options_.ownership->OwnerElsewhere(node);
  if (!owner.empty() && owner == peer.unserved_owner) {
    LOG(INFO) << "edge hub: node " << node << " was not served at its owner " << owner
              << "; serving it here";
    owner.clear();
  }

  v1::SyncResponse reply;
  reply.mutable_hello_reply()->set_node_name(node);
  reply.mutable_hello_reply()->set_protocol_version(net::kEdgeProtocolVersion);
  reply.mutable_hello_reply()->set_gm_version(options_.gm_version);
  reply.mutable_hello_reply()->add_capabilities(std::string(net::kEdgeCapabilityNodeSummary));

  std::shared_ptr<Session> replaced;
  uint32_t upserts = 0;
  bool held_for_sync = false;
  {
    absl::MutexLock lock(&mu_);
    awaiting_hello_.erase(session->id());
    // Ended meanwhile (its Hello came too late, or the node left): not installed.
    if (session->finishing()) return false;
    if (shutting_down_) {
      session->RequestFinish(GrpcError(grpc::StatusCode::UNAVAILABLE, "GM shutting down"));
      return false;
    }
    if (!accepting_) {
      if (!owner_address_.empty()) metrics_.streams_redirected().Increment();
      session->RequestFinish(
          GrpcError(grpc::StatusCode::UNAVAILABLE,
                    owner_address_.empty()
                        ? std::string("this GM replica is not the leader; retry")
                        : absl::StrCat("this GM replica is not the leader; the leader serves at ",
                                       owner_address_)),
          owner_address_);
      return false;
    }
    if (!owner.empty()) {
      metrics_.streams_redirected().Increment();
      session->RequestFinish(
          GrpcError(grpc::StatusCode::UNAVAILABLE,
                    absl::StrCat("node ", node, " is served by the GM replica at ", owner)),
          owner);
      return false;
    }
    NodeState& state = nodes_[node];
    replaced = std::move(state.session);
    state.session = session;
    state.relayed = peer.relayed;
    state.unserved_owner = peer.unserved_owner;
    SetLcVersionLocked(state, lc_versions_.Label(hello.lc_version()));
    session->Establish(node, &metrics_.queue_depths(), hello, std::move(reply));
    bool ok = true;
    for (const auto& [key, resource] : state.desired) {
      if (!session->NeedsUpsert(key, *resource)) continue;
      if (!session->EnqueueUpsert(key, resource)) {
        ok = false;
        break;
      }
      ++upserts;
    }
    if (ok && synced_) ok = FinishResyncLocked(state, upserts);
    held_for_sync = !synced_;
    if (!ok) OverflowLocked(state);
    if (replaced != nullptr) {
      metrics_.sessions_replaced().Increment();
    } else {
      metrics_.connected_nodes().Set(++connected_);
    }
    metrics_.disconnected_nodes().Connected(node);
  }
  if (replaced != nullptr) {
    LOG(INFO) << "edge hub: node " << node << ": a new stream replaces the previous one";
    replaced->RequestFinish(
        GrpcError(grpc::StatusCode::ABORTED, "replaced by a newer stream for node " + node));
    replaced->Pump();
  }
  LOG(INFO) << "edge hub: node " << node << " connected (lc "
            << (hello.lc_version().empty() ? "unknown" : hello.lc_version()) << " commit "
            << (hello.lc_commit().empty() ? "unknown" : hello.lc_commit()) << ", holds "
            << hello.inventory_size() << " objects, sending " << upserts << " upserts"
            << (held_for_sync ? "; removes wait for the registry to sync)" : ")");
  if (options_.node_listener != nullptr) {
    options_.node_listener->OnNodeConnected(NodeConnection{.node = node,
                                                           .stream = session->id(),
                                                           .relayed = peer.relayed,
                                                           .lc_version = hello.lc_version(),
                                                           .lc_commit = hello.lc_commit(),
                                                           .at = options_.clock->Now()});
  }
  return true;
}

bool EdgeHub::FinishResyncLocked(NodeState& state, uint32_t upserts) {
  Session& session = *state.session;
  uint32_t removes = 0;
  for (const std::string& key : session.HeldKeys()) {
    if (state.desired.contains(key)) continue;
    v1::ObjectRef ref;
    // Keys are "Kind/namespace/name"; names and namespaces cannot contain '/'.
    std::vector<std::string> parts = absl::StrSplit(key, absl::MaxSplits('/', 2));
    if (parts.size() != 3) continue;
    ref.set_kind(parts[0]);
    ref.set_namespace_(parts[1]);
    ref.set_name(parts[2]);
    if (!session.EnqueueRemove(key, ref)) return false;
    ++removes;
  }
  return session.EnqueueResyncDone(upserts, removes);
}

void EdgeHub::OverflowLocked(NodeState& state) {
  LOG(WARNING) << "edge hub: node " << state.session->node() << ": send queue full ("
               << options_.max_queue << " objects); closing the stream, the node will resync";
  state.session->RequestFinish(
      GrpcError(grpc::StatusCode::RESOURCE_EXHAUSTED, "send queue full; reconnect to resync"));
}

void EdgeHub::OnSessionDone(const std::shared_ptr<Session>& session,
                            const std::string& connection) {
  const grpc::Status status = session->finish_status();
  bool current = true;  // the node's current stream (not one a newer stream replaced)
  {
    absl::MutexLock lock(&mu_);
    ReleaseConnectionStreamLocked(connection);
    awaiting_hello_.erase(session->id());
    if (!session->established()) return;
    session->ReleaseQueueDepth();
    auto it = nodes_.find(session->node());
    if (it == nodes_.end() || it->second.session != session) {
      current = false;
    } else {
      it->second.session.reset();
      SetLcVersionLocked(it->second, "");
      metrics_.connected_nodes().Set(--connected_);
      // Sent to another replica, or cut off because this one stops serving: served elsewhere.
      if (accepting_ && !shutting_down_ && session->finish_owner().empty()) {
        metrics_.disconnected_nodes().Disconnected(session->node(), options_.clock->Now());
      }
    }
  }
  LOG(INFO) << "edge hub: node " << session->node() << " stream " << session->id()
            << " ended: " << status.error_code() << " " << status.error_message();
  if (current && options_.node_listener != nullptr) {
    options_.node_listener->OnNodeDisconnected(session->node(), session->id(),
                                               options_.clock->Now());
  }
}

void EdgeHub::SetLcVersionLocked(NodeState& state, std::string label) {
  if (state.lc_version == label) return;
  if (!state.lc_version.empty()) lc_versions_.Disconnected(state.lc_version);
  if (!label.empty()) lc_versions_.Connected(label);
  state.lc_version = std::move(label);
}

void EdgeHub::HandleSummary(const std::shared_ptr<Session>& session,
                            const v1::NodeSummary& summary) {
  if (options_.node_listener != nullptr) {
    options_.node_listener->OnNodeSummary(session->node(), session->id(), summary);
  }
}

void EdgeHub::ReleaseConnectionStream(const std::string& connection) {
  absl::MutexLock lock(&mu_);
  ReleaseConnectionStreamLocked(connection);
}

void EdgeHub::ReleaseConnectionStreamLocked(const std::string& connection) {
  if (connection.empty()) return;
  auto counted = streams_per_connection_.find(connection);
  if (counted != streams_per_connection_.end() && --counted->second == 0) {
    streams_per_connection_.erase(counted);
  }
}

std::size_t EdgeHub::streams_awaiting_hello() const {
  absl::MutexLock lock(&mu_);
  return awaiting_hello_.size();
}

int EdgeHub::EndStreamsWithoutHello() {
  if (options_.hello_timeout <= absl::ZeroDuration()) return 0;
  const absl::Time opened_before = options_.clock->Now() - options_.hello_timeout;
  const std::string why = absl::StrCat("no Hello within ",
                                       absl::FormatDuration(options_.hello_timeout),
                                       " of opening the stream");
  std::vector<std::shared_ptr<Session>> silent;
  {
    // Finished under mu_, so a Hello read meanwhile finds its session finishing (HandleHello).
    absl::MutexLock lock(&mu_);
    for (auto it = awaiting_hello_.begin(); it != awaiting_hello_.end();) {
      if (it->second.opened > opened_before) {
        ++it;
        continue;
      }
      std::shared_ptr<Session> session = it->second.session.lock();
      if (session != nullptr &&
          session->RequestFinish(GrpcError(grpc::StatusCode::DEADLINE_EXCEEDED, why))) {
        silent.push_back(std::move(session));
      }
      awaiting_hello_.erase(it++);
    }
  }
  for (const std::shared_ptr<Session>& session : silent) session->Pump();
  int ended = static_cast<int>(silent.size());
  if (options_.relay != nullptr) {
    ended += options_.relay->EndStreamsWithoutHello(options_.hello_timeout);
  }
  if (ended > 0) {
    metrics_.hello_timeouts().Increment(ended);
    LOG(WARNING) << "edge hub: ended " << ended << " streams that sent no Hello within "
                 << absl::FormatDuration(options_.hello_timeout);
  }
  return ended;
}

void EdgeHub::HandleChangeAck(const std::shared_ptr<Session>& session, const v1::ChangeAck& ack) {
  std::optional<Session::AckedChange> acked = session->OnChangeAck(ack);
  if (!acked.has_value()) {
    LOG(WARNING) << "edge hub: node " << session->node() << ": ACK for unknown nonce "
                 << ack.nonce() << " ignored";
    return;
  }
  metrics_.dispatch_latency().Observe(absl::ToDoubleSeconds(acked->latency));
  metrics_.dispatch_queued().Observe(absl::ToDoubleSeconds(acked->queued));
  metrics_.dispatch_writing().Observe(absl::ToDoubleSeconds(acked->writing));
  metrics_.dispatch_at_node().Observe(absl::ToDoubleSeconds(acked->at_node));
  if (!ack.has_error_detail()) {
    metrics_.changes_acked().Increment();
    if (options_.delivery_listener != nullptr) {
      options_.delivery_listener->OnChangeAcked(session->node(), acked->ref, acked->version,
                                                acked->removed);
    }
    return;
  }
  metrics_.changes_nacked().Increment();
  const absl::Status error = net::FromErrorDetail(ack.error_detail());
  LOG(WARNING) << "edge hub: node " << session->node() << " rejected " << net::RefString(acked->ref)
               << " version " << acked->version << ": " << error;
  if (options_.delivery_listener != nullptr) {
    options_.delivery_listener->OnChangeNacked(session->node(), acked->ref, acked->version, error);
  }
}

}  // namespace nereid::gm
