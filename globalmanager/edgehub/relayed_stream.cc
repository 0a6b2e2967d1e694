#include "globalmanager/edgehub/relayed_stream.h"

#include <utility>

#include "common/net/edge_protocol.h"
#include "globalmanager/edgehub/stream_peer.h"
#include "grpcpp/client_context.h"
#include "grpcpp/server_context.h"

namespace nereid::gm {

namespace v1 = edge::v1;

class RelayedStream::NodeSide final : public NodeStreamReactor {
 public:
  NodeSide(grpc::CallbackServerContext* context, std::shared_ptr<RelayedStream> stream)
      : context_(context), stream_(std::move(stream)) {
    StartRead(&stream_->request_);
  }

  void ReadNext() { StartRead(&stream_->request_); }
  void Write(const v1::SyncResponse* response) { StartWrite(response); }
  void End(const Ending& ending) {
    if (!ending.owner.empty()) context_->AddTrailingMetadata(net::kEdgeOwnerTrailer, ending.owner);
    Finish(ending.status);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      stream_->OnNodeGone(grpc::Status::OK);  // the node closed its side or the stream broke
    } else if (!hello_seen_) {
      hello_seen_ = true;
      stream_->OnHello(&stream_->request_);
    } else {
      stream_->ForwardUp(&stream_->request_);
    }
  }
  void OnWriteDone(bool ok) override { stream_->OnNodeWriteDone(ok); }
  void OnCancel() override {
    stream_->OnNodeGone(grpc::Status(grpc::StatusCode::CANCELLED, "stream cancelled"));
  }
  void OnDone() override {
    stream_->OnNodeDone();
    delete this;  // the callback API's ownership: gRPC is done with the reactor
  }

 private:
  grpc::CallbackServerContext* const context_;
  const std::shared_ptr<RelayedStream> stream_;
  bool hello_seen_ = false;
};

class RelayedStream::LeaderSide final
    : public grpc::ClientBidiReactor<v1::SyncRequest, v1::SyncResponse> {
 public:
  LeaderSide(std::shared_ptr<RelayedStream> stream, const std::string& node)
      : stream_(std::move(stream)) {
    context_.AddMetadata(net::kRelayedNodeMetadata, node);
    stream_->upstream_.stub->async()->Sync(&context_, this);
    AddHold();  // the node side's; see CloseLeader
  }

  void Begin(const v1::SyncRequest* hello) {
    StartWrite(hello);
    StartRead(&stream_->response_);
    StartCall();
  }
  void Write(const v1::SyncRequest* request) { StartWrite(request); }
  void ReadNext() { StartRead(&stream_->response_); }
  void Cancel() { context_.TryCancel(); }
  void ReleaseHold() { RemoveHold(); }

  void OnWriteDone(bool ok) override { stream_->OnLeaderWriteDone(ok); }
  void OnReadDone(bool ok) override {
    if (ok) {
      answered_ = true;
      stream_->ForwardDown(&stream_->response_);
    } else {
      stream_->CloseLeader();  // the leader ended the call: the node side must let it finish
    }
  }
  void OnDone(const grpc::Status& status) override {
    std::string owner;
    const auto& trailers = context_.GetServerTrailingMetadata();
    if (auto it = trailers.find(net::kEdgeOwnerTrailer); it != trailers.end()) {
      owner.assign(it->second.data(), it->second.size());
    }
    stream_->OnLeaderDone(status, std::move(owner), answered_);
    delete this;  // the callback API's ownership: gRPC is done with the reactor
  }

 private:
  const std::shared_ptr<RelayedStream> stream_;
  grpc::ClientContext context_;
  bool answered_ = false;
};

std::pair<std::shared_ptr<RelayedStream>, NodeStreamReactor*> RelayedStream::Start(
    grpc::CallbackServerContext* context, net::PeerIdentity peer, Upstream upstream,
    Hooks hooks) {
  auto stream =
      std::make_shared<RelayedStream>(std::move(peer), std::move(upstream), std::move(hooks));
  auto* node = new NodeSide(context, stream);  // gRPC's from here; deleted in its OnDone
  stream->node_ = node;
  return {stream, node};
}

RelayedStream::RelayedStream(net::PeerIdentity peer, Upstream upstream, Hooks hooks)
    : peer_(std::move(peer)), upstream_(std::move(upstream)), hooks_(std::move(hooks)) {}

RelayedStream::~RelayedStream() = default;

void RelayedStream::Cancel(grpc::Status status, std::string owner) {
  bool started;
  Ending ending{std::move(status), std::move(owner)};
  {
    absl::MutexLock lock(&mu_);
    if (!cancelled_.has_value()) cancelled_ = ending;
    started = upstream_started_;
  }
  if (started) {
    CancelLeader();
    CloseLeader();
  } else {
    FinishNode(std::move(ending));
  }
}

std::string RelayedStream::node() const {
  absl::MutexLock lock(&mu_);
  if (cancelled_.has_value() || node_gone_ || finish_called_) return "";
  return node_name_;
}

bool RelayedStream::CancelIfAwaitingHello(grpc::Status status) {
  Ending ending{std::move(status), ""};
  {
    absl::MutexLock lock(&mu_);
    if (upstream_started_ || cancelled_.has_value() || node_gone_ || finish_called_) return false;
    cancelled_ = ending;  // a Hello read meanwhile ends with it (OnHello)
  }
  FinishNode(std::move(ending));
  return true;
}

void RelayedStream::OnHello(const v1::SyncRequest* hello) {
  grpc::Status check = CheckHello(*hello, peer_, hooks_.allow_unauthenticated);
  if (!check.ok()) {
    FinishNode({std::move(check), ""});
    return;
  }
  const std::string& node = hello->hello().node_name();
  if (hooks_.ownership != nullptr) {
    if (std::string owner = hooks_.ownership->OwnerElsewhere(node);
        !owner.empty() && owner != hooks_.unserved_owner) {
      if (hooks_.on_redirected) hooks_.on_redirected();
      FinishNode({grpc::Status(grpc::StatusCode::UNAVAILABLE,
                               "node " + node + " is served by the GM replica at " + owner),
                  std::move(owner)});
      return;
    }
  }
  std::optional<Ending> ended;
  {
    absl::MutexLock lock(&mu_);
    if (cancelled_.has_value()) {
      ended = *cancelled_;
    } else if (node_gone_) {
      ended = Ending{grpc::Status(grpc::StatusCode::CANCELLED, "stream cancelled"), ""};
    } else {
      upstream_started_ = true;
      node_name_ = node;
    }
  }
  if (ended.has_value()) {
    FinishNode(std::move(*ended));
    return;
  }
  auto* leader = new LeaderSide(shared_from_this(), hello->hello().node_name());  // gRPC's
  bool cancel_now;
  {
    absl::MutexLock lock(&mu_);
    leader_ = leader;
    leader_open_ = true;
    ++leader_ops_;
    cancel_now = cancelled_.has_value() || node_gone_;
  }
  leader->Begin(hello);
  EndLeaderOp();
  if (cancel_now) {
    CancelLeader();
    CloseLeader();
  }
}

void RelayedStream::ForwardUp(const v1::SyncRequest* request) {
  LeaderSide* leader = BeginLeaderOp();
  if (leader == nullptr) return;  // the leader call is ending: so is this stream
  leader->Write(request);
  EndLeaderOp();
}

void RelayedStream::OnLeaderWriteDone(bool ok) {
  if (ok) {
    node_->ReadNext();
  } else {
    CloseLeader();  // the leader call broke; its OnDone ends the node's stream
  }
}

void RelayedStream::ForwardDown(const v1::SyncResponse* response) {
  {
    absl::MutexLock lock(&mu_);
    node_writing_ = true;
  }
  node_->Write(response);
}

void RelayedStream::OnNodeWriteDone(bool ok) {
  std::optional<Ending> ending;
  {
    absl::MutexLock lock(&mu_);
    node_writing_ = false;
    if (ending_.has_value()) {
      ending = std::move(ending_);
      ending_.reset();
      finish_called_ = true;
    }
  }
  if (ending.has_value()) {
    node_->End(*ending);
    return;
  }
  if (!ok) {  // the node is gone
    CancelLeader();
    CloseLeader();
    return;
  }
  if (LeaderSide* leader = BeginLeaderOp(); leader != nullptr) {
    leader->ReadNext();
    EndLeaderOp();
  }
}

void RelayedStream::OnNodeGone(grpc::Status status) {
  bool started;
  {
    absl::MutexLock lock(&mu_);
    node_gone_ = true;
    started = upstream_started_;
  }
  if (started) {
    CancelLeader();  // its OnDone finishes the node's stream
    CloseLeader();
  } else {
    FinishNode({std::move(status), ""});
  }
}

void RelayedStream::OnNodeDone() {
  if (hooks_.on_done) hooks_.on_done();
}

void RelayedStream::OnLeaderDone(grpc::Status status, std::string owner, bool answered) {
  std::optional<Ending> cancelled;
  bool node_gone;
  {
    absl::MutexLock lock(&mu_);
    leader_ = nullptr;
    cancelled = cancelled_;
    node_gone = node_gone_;
  }
  Ending ending = cancelled.has_value() ? *std::move(cancelled)
                                        : Ending{std::move(status), std::move(owner)};
  // Ended by this side (the node left, or the relay stopped): nothing to say about the leader.
  const bool ended_here = cancelled.has_value() || node_gone;
  if (hooks_.on_upstream_done && !ended_here) hooks_.on_upstream_done(answered);
  if (!answered && !ended_here && ending.owner.empty()) {
    // Never answered, and the node's Hello passed here: the leader is unreachable from here or
    // refused the relay itself (e.g. replicas holding different GM certificates). The node may
    // still reach it directly; UNAVAILABLE is the status an LC follows the address on.
    ending.owner = upstream_.address;
    if (!ending.status.ok() && ending.status.error_code() != grpc::StatusCode::UNAVAILABLE) {
      ending.status = grpc::Status(grpc::StatusCode::UNAVAILABLE,
                                   "the leader refused the relay: " + ending.status.error_message());
    }
  }
  FinishNode(std::move(ending));
}

RelayedStream::LeaderSide* RelayedStream::BeginLeaderOp() {
  absl::MutexLock lock(&mu_);
  if (!leader_open_) return nullptr;
  ++leader_ops_;
  return leader_;
}

void RelayedStream::EndLeaderOp() {
  LeaderSide* release = nullptr;
  {
    absl::MutexLock lock(&mu_);
    --leader_ops_;
    if (!leader_open_ && leader_ops_ == 0) release = leader_;
  }
  if (release != nullptr) release->ReleaseHold();
}

void RelayedStream::CloseLeader() {
  LeaderSide* release = nullptr;
  {
    absl::MutexLock lock(&mu_);
    if (!leader_open_) return;
    leader_open_ = false;
    if (leader_ops_ == 0) release = leader_;
  }
  if (release != nullptr) release->ReleaseHold();
}

void RelayedStream::CancelLeader() {
  if (LeaderSide* leader = BeginLeaderOp(); leader != nullptr) {
    leader->Cancel();
    EndLeaderOp();
  }
}

void RelayedStream::FinishNode(Ending ending) {
  {
    absl::MutexLock lock(&mu_);
    if (finish_called_ || ending_.has_value()) return;
    if (node_writing_) {
      ending_ = std::move(ending);  // after the write: Finish must not overtake it
      return;
    }
    finish_called_ = true;
  }
  node_->End(ending);
}

}  // namespace nereid::gm
