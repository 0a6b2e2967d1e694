#include "bench/edge_simulator/node_stream.h"

#include "common/net/edge_protocol.h"

#include <utility>

namespace nereid::bench {

namespace v1 = edge::v1;

std::shared_ptr<NodeStream> NodeStream::Create(Listener* listener) {
  auto stream = std::make_shared<NodeStream>(listener);
  stream->self_ = stream;
  return stream;
}

void NodeStream::Start(v1::EdgeSync::Stub* stub, v1::SyncRequest first) {
  // A node dialing during a connection storm waits for the channel instead of failing at once.
  context_.set_wait_for_ready(true);
  stub->async()->Sync(&context_, this);
  writing_ = std::move(first);
  // Operations started before StartCall are batched with it; write_in_flight_ has been true
  // since Create, so Send() only queued behind this write.
  StartWrite(&writing_);
  StartRead(&response_);
  StartCall();
}

bool NodeStream::Send(v1::SyncRequest message) {
  grpc::WriteOptions options;
  {
    absl::MutexLock lock(&mu_);
    if (read_closed_ && !write_in_flight_) return false;
    queue_.push_back(std::move(message));
    if (write_in_flight_) return true;  // OnWriteDone takes it.
    write_in_flight_ = true;
    writing_ = std::move(queue_.front());
    queue_.pop_front();
    if (!queue_.empty()) options.set_buffer_hint();
    // The read is still pending here, so a hold may be added; it keeps OnDone (and with it the
    // end of the call) away until StartWrite has been called.
    AddHold();
  }
  StartWrite(&writing_, options);
  RemoveHold();
  return true;
}

void NodeStream::Cancel() { context_.TryCancel(); }

void NodeStream::OnWriteDone(bool ok) {
  grpc::WriteOptions options;
  {
    absl::MutexLock lock(&mu_);
    if (!ok || queue_.empty()) {
      // A failed write means the stream is broken: OnReadDone(false) and OnDone follow.
      if (!ok) queue_.clear();
      write_in_flight_ = false;
      return;
    }
    writing_ = std::move(queue_.front());
    queue_.pop_front();
    // Several messages waiting (a burst of ACKs): let gRPC coalesce them into fewer frames; the
    // last one of the burst is written without the hint and flushes them all.
    if (!queue_.empty()) options.set_buffer_hint();
  }
  StartWrite(&writing_, options);  // From a reaction: the call cannot end meanwhile.
}

void NodeStream::OnReadDone(bool ok) {
  if (!ok) {
    absl::MutexLock lock(&mu_);
    read_closed_ = true;
    return;
  }
  listener_->OnMessage(this, response_);
  StartRead(&response_);
}

void NodeStream::OnDone(const grpc::Status& status) {
  // gRPC's reference goes last: `this` may be destroyed when `keep` leaves scope.
  std::shared_ptr<NodeStream> keep = std::move(self_);
  std::string owner;
  const auto& trailers = context_.GetServerTrailingMetadata();
  if (auto it = trailers.find(net::kEdgeOwnerTrailer); it != trailers.end()) {
    owner.assign(it->second.data(), it->second.size());
  }
  listener_->OnEnded(this, status, owner);
}

}  // namespace nereid::bench
