#pragma once

// One Sync stream from the LC to the GM on gRPC's callback API. Reactions never block: received
// messages go to an inbox (reading pauses while it is full, so a slow database pushes back on the
// GM through HTTP/2 flow control), writes are queued and sent one at a time, and every event calls
// `notify` so the link thread wakes up. The link thread owns the object and destroys it only after
// done() (AwaitDone).

#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/client_context.h"
#include "grpcpp/support/client_callback.h"
#include "nereid/edge/v1/sync.grpc.pb.h"

namespace nereid::lc {

class LinkStream final
    : public grpc::ClientBidiReactor<edge::v1::SyncRequest, edge::v1::SyncResponse> {
 public:
  LinkStream(std::function<void()> notify, std::size_t max_inbox);
  ~LinkStream() override;

  // Request metadata for the call; before Start.
  void AddMetadata(const std::string& key, const std::string& value) {
    context_.AddMetadata(key, value);
  }
  // Starts the call with `hello` as its first message.
  void Start(edge::v1::EdgeSync::Stub* stub, edge::v1::SyncRequest hello);
  // Queues a message (dropped once the stream is broken: everything unacked is resent after the
  // reconnect anyway).
  void Send(edge::v1::SyncRequest message);
  // The next received message, if any; resumes reading when the inbox had filled up.
  std::optional<edge::v1::SyncResponse> Take();
  void Cancel();
  bool done() const;
  grpc::Status status() const;
  // The server's trailing metadata `key` ("" if absent); only once done().
  std::string Trailer(std::string_view key) const;
  // Blocks until gRPC is done with the stream (prompt after Cancel or once the call ended).
  void AwaitDone();

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnDone(const grpc::Status& status) override;

 private:
  void StartNextWriteLocked(bool* start) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::function<void()> notify_;
  const std::size_t max_inbox_;
  grpc::ClientContext context_;

  mutable absl::Mutex mu_;
  std::deque<edge::v1::SyncRequest> outbox_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool write_failed_ ABSL_GUARDED_BY(mu_) = false;
  std::deque<edge::v1::SyncResponse> inbox_ ABSL_GUARDED_BY(mu_);
  bool read_paused_ ABSL_GUARDED_BY(mu_) = false;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  grpc::Status status_ ABSL_GUARDED_BY(mu_);
  // gRPC owns these between Start{Read,Write} and the matching reaction.
  edge::v1::SyncRequest write_buf_;
  edge::v1::SyncResponse read_buf_;
};

}  // namespace nereid::lc
