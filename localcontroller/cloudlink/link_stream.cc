#include "localcontroller/cloudlink/link_stream.h"

#include <utility>

namespace nereid::lc {

namespace v1 = edge::v1;

LinkStream::LinkStream(std::function<void()> notify, std::size_t max_inbox)
    : notify_(std::move(notify)), max_inbox_(max_inbox == 0 ? 1 : max_inbox) {}

LinkStream::~LinkStream() = default;

void LinkStream::Start(v1::EdgeSync::Stub* stub, v1::SyncRequest hello) {
  stub->async()->Sync(&context_, this);
  Send(std::move(hello));
  StartRead(&read_buf_);
  StartCall();
}

void LinkStream::StartNextWriteLocked(bool* start) {
  *start = false;
  if (writing_ || write_failed_ || outbox_.empty()) return;
  write_buf_ = std::move(outbox_.front());
  outbox_.pop_front();
  writing_ = true;
  *start = true;
}

void LinkStream::Send(v1::SyncRequest message) {
  bool start;
  {
    absl::MutexLock lock(&mu_);
    if (write_failed_ || done_) return;
    outbox_.push_back(std::move(message));
    StartNextWriteLocked(&start);
  }
  // Outside the lock: gRPC may run OnWriteDone inline.
  if (start) StartWrite(&write_buf_);
}

void LinkStream::OnWriteDone(bool ok) {
  bool start = false;
  {
    absl::MutexLock lock(&mu_);
    writing_ = false;
    if (!ok) {
      write_failed_ = true;
      outbox_.clear();
    } else {
      StartNextWriteLocked(&start);
    }
  }
  if (start) StartWrite(&write_buf_);
}

void LinkStream::OnReadDone(bool ok) {
  bool read_more = false;
  {
    absl::MutexLock lock(&mu_);
    if (ok) {
      inbox_.push_back(std::move(read_buf_));
      read_buf_ = v1::SyncResponse();
      if (inbox_.size() < max_inbox_) {
        read_more = true;
      } else {
        // No read outstanding: hold OnDone off until Take() resumes reading or Cancel(). Under
        // the lock so a concurrent Take() cannot RemoveHold() first (AddHold only counts).
        read_paused_ = true;
        AddHold();
      }
    }
  }
  if (read_more) StartRead(&read_buf_);
  notify_();
}

std::optional<v1::SyncResponse> LinkStream::Take() {
  bool resume = false;
  std::optional<v1::SyncResponse> message;
  {
    absl::MutexLock lock(&mu_);
    if (inbox_.empty()) return std::nullopt;
    message = std::move(inbox_.front());
    inbox_.pop_front();
    if (read_paused_) {
      read_paused_ = false;
      resume = true;
    }
  }
  if (resume) {
    StartRead(&read_buf_);
    RemoveHold();
  }
  return message;
}

void LinkStream::OnDone(const grpc::Status& status) {
  absl::MutexLock lock(&mu_);
  done_ = true;
  status_ = status;
  // Under the lock: once done_ is visible the owner may destroy this object (and notify_), so
  // nothing may touch it after the unlock. Lock order LinkStream::mu_ -> the owner's lock; the
  // owner never calls into the stream while holding its own lock.
  notify_();
}

void LinkStream::Cancel() {
  bool release = false;
  {
    absl::MutexLock lock(&mu_);
    if (read_paused_) {
      read_paused_ = false;
      release = true;
    }
  }
  context_.TryCancel();
  if (release) RemoveHold();
}

bool LinkStream::done() const {
  absl::MutexLock lock(&mu_);
  return done_;
}

grpc::Status LinkStream::status() const {
  absl::MutexLock lock(&mu_);
  return status_;
}

std::string LinkStream::Trailer(std::string_view key) const {
  // After OnDone gRPC has filled the trailers and no longer touches the context.
  const auto& trailers = context_.GetServerTrailingMetadata();
  const auto it = trailers.find(grpc::string_ref(key.data(), key.size()));
  return it == trailers.end() ? std::string() : std::string(it->second.data(), it->second.size());
}

void LinkStream::AwaitDone() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(&done_));
}

}  // namespace nereid::lc
