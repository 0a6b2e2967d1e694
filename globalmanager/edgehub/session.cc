#include "globalmanager/edgehub/session.h"

#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/net/edge_protocol.h"

namespace nereid::gm {

namespace v1 = edge::v1;

namespace {
// Queue key of the ResyncDone marker; cannot collide with "Kind/namespace/name".
constexpr char kResyncDoneKey[] = "\x01resync-done";
}  // namespace

Session::Session(Options options, uint64_t id)
    : options_(options), id_(id), queue_(options.max_queue) {}

void Session::Attach(SessionTransport* transport) {
  absl::MutexLock lock(&mu_);
  transport_ = transport;
}

void Session::Detach() {
  absl::MutexLock lock(&mu_);
  transport_ = nullptr;
}

void Session::OnWriteDone(bool ok) {
  absl::MutexLock lock(&mu_);
  write_in_flight_ = false;
  if (writing_nonce_ != 0) {
    if (auto it = sent_.find(writing_nonce_); ok && it != sent_.end()) {
      it->second.written = options_.clock->Now();
    }
    writing_nonce_ = 0;
  }
  if (!ok && !finish_requested_) {
    // The stream is broken (peer gone or cancelled); Finish is still required.
    finish_requested_ = true;
    finish_status_ = grpc::Status(grpc::StatusCode::UNAVAILABLE, "write to the node failed");
  }
}

bool Session::RequestFinish(grpc::Status status, std::string owner) {
  absl::MutexLock lock(&mu_);
  if (finish_requested_) return false;
  finish_requested_ = true;
  finish_status_ = std::move(status);
  finish_owner_ = std::move(owner);
  return true;
}

bool Session::finishing() const {
  absl::MutexLock lock(&mu_);
  return finish_requested_;
}

grpc::Status Session::finish_status() const {
  absl::MutexLock lock(&mu_);
  return finish_status_;
}

std::string Session::finish_owner() const {
  absl::MutexLock lock(&mu_);
  return finish_owner_;
}

void Session::Pump() {
  SessionTransport* transport = nullptr;
  bool finish = false;
  grpc::Status status;
  std::string owner;
  {
    absl::MutexLock lock(&mu_);
    if (transport_ == nullptr || finish_started_ || write_in_flight_) return;
    if (finish_requested_) {
      // Only with no write in flight: the stream's message buffer must outlive the write.
      finish_started_ = true;
      finish = true;
      status = finish_status_;
      owner = finish_owner_;
    } else if (!control_.empty()) {
      writing_nonce_ = 0;
      out_ = std::move(control_.front());
      control_.pop_front();
    } else if (sent_.size() < options_.max_in_flight && !queue_.empty()) {
      auto entry = queue_.Pop();
      UpdateDepthLocked();
      Queued& q = entry->second;
      out_.Clear();
      if (q.type == Queued::Type::kResyncDone) {
        writing_nonce_ = 0;
        v1::ResyncDone* done = out_.mutable_resync_done();
        done->set_upserts(q.upserts);
        done->set_removes(q.removes);
      } else {
        const uint64_t nonce = next_nonce_++;
        v1::Change* change = out_.mutable_change();
        change->set_nonce(absl::StrCat(nonce));
        Sent sent;
        sent.enqueued = q.enqueued;
        sent.write_started = options_.clock->Now();
        writing_nonce_ = nonce;
        if (q.type == Queued::Type::kUpsert) {
          *change->mutable_upsert() = *q.resource;
          sent.ref = q.resource->ref();
          sent.version = q.resource->version();
        } else {
          v1::Removal* removal = change->mutable_remove();
          *removal->mutable_ref() = q.ref;
          removal->set_version(q.version);
          sent.ref = q.ref;
          sent.version = q.version;
          sent.removed = true;
        }
        sent_.emplace(nonce, std::move(sent));
      }
    } else {
      return;
    }
    if (!finish) write_in_flight_ = true;
    transport = transport_;
  }
  // Outside the lock: gRPC may run reactions inline. The transport stays valid: OnDone (which
  // detaches it) cannot run before a started write completes or before this Finish.
  if (finish) {
    transport->End(std::move(status), owner);
  } else {
    transport->Write(&out_);
  }
}

void Session::Establish(const std::string& node, NodeQueueDepths* depths, const v1::Hello& hello,
                        v1::SyncResponse hello_reply) {
  absl::MutexLock lock(&mu_);
  node_ = node;
  depths_ = depths;
  established_ = true;
  for (const v1::InventoryItem& item : hello.inventory()) {
    if (!net::ValidateRef(item.ref()).ok()) continue;  // cannot address it; the LC logs its own
    held_[net::ObjectKey(item.ref())] = Held{item.ref().uid(), item.version()};
  }
  control_.push_back(std::move(hello_reply));
  UpdateDepthLocked();
}

bool Session::established() const {
  absl::MutexLock lock(&mu_);
  return established_;
}

bool Session::NeedsUpsert(const std::string& key, const v1::Resource& resource) const {
  absl::MutexLock lock(&mu_);
  auto it = held_.find(key);
  if (it == held_.end()) return true;
  return it->second.version != resource.version() || it->second.uid != resource.ref().uid();
}

bool Session::Holds(const std::string& key) const {
  absl::MutexLock lock(&mu_);
  return held_.contains(key);
}

std::vector<std::string> Session::HeldKeys() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> keys;
  keys.reserve(held_.size());
  for (const auto& [key, held] : held_) keys.push_back(key);
  return keys;
}

bool Session::PushLocked(const std::string& key, Queued entry) {
  if (const Queued* older = queue_.Find(key)) entry.enqueued = older->enqueued;
  if (queue_.Push(key, std::move(entry)) == CoalescingQueue<Queued>::PushResult::kFull) {
    return false;
  }
  UpdateDepthLocked();
  return true;
}

bool Session::EnqueueUpsert(const std::string& key, std::shared_ptr<const v1::Resource> resource) {
  absl::MutexLock lock(&mu_);
  Queued entry;
  entry.type = Queued::Type::kUpsert;
  entry.enqueued = options_.clock->Now();
  Held held{resource->ref().uid(), resource->version()};
  entry.resource = std::move(resource);
  if (!PushLocked(key, std::move(entry))) return false;
  held_[key] = std::move(held);
  return true;
}

bool Session::EnqueueRemove(const std::string& key, const v1::ObjectRef& ref) {
  absl::MutexLock lock(&mu_);
  Queued entry;
  entry.type = Queued::Type::kRemove;
  entry.enqueued = options_.clock->Now();
  entry.ref = ref;
  if (auto it = held_.find(key); it != held_.end()) {
    if (entry.ref.uid().empty()) entry.ref.set_uid(it->second.uid);
    entry.version = it->second.version;
  }
  if (!PushLocked(key, std::move(entry))) return false;
  held_.erase(key);
  return true;
}

bool Session::EnqueueResyncDone(uint32_t upserts, uint32_t removes) {
  absl::MutexLock lock(&mu_);
  Queued entry;
  entry.type = Queued::Type::kResyncDone;
  entry.enqueued = options_.clock->Now();
  entry.upserts = upserts;
  entry.removes = removes;
  if (!PushLocked(kResyncDoneKey, std::move(entry))) return false;
  resync_pending_ = false;
  return true;
}

void Session::EnqueueControl(v1::SyncResponse message) {
  absl::MutexLock lock(&mu_);
  control_.push_back(std::move(message));
}

std::optional<Session::AckedChange> Session::OnChangeAck(const v1::ChangeAck& ack) {
  uint64_t nonce = 0;
  if (!absl::SimpleAtoi(ack.nonce(), &nonce)) return std::nullopt;
  absl::MutexLock lock(&mu_);
  auto it = sent_.find(nonce);
  if (it == sent_.end()) return std::nullopt;
  const absl::Time now = options_.clock->Now();
  Sent& sent = it->second;
  // An ACK read before OnWriteDone ran (the callbacks race) counts as still writing.
  const absl::Time written = sent.written == absl::InfinitePast() ? now : sent.written;
  AckedChange acked{.ref = std::move(sent.ref),
                    .version = std::move(sent.version),
                    .removed = sent.removed,
                    .latency = now - sent.enqueued,
                    .queued = sent.write_started - sent.enqueued,
                    .writing = written - sent.write_started,
                    .at_node = now - written};
  sent_.erase(it);
  // A NACKed change stays recorded in held_ as attempted: the hub does not resend the same
  // version on this stream (Envoy xDS semantics); a newer version or a reconnect tries again.
  return acked;
}

bool Session::resync_pending() const {
  absl::MutexLock lock(&mu_);
  return resync_pending_;
}

std::size_t Session::queued() const {
  absl::MutexLock lock(&mu_);
  return queue_.size();
}

std::size_t Session::in_flight() const {
  absl::MutexLock lock(&mu_);
  return sent_.size();
}

void Session::UpdateDepthLocked() {
  if (depths_ == nullptr) return;
  depths_->Changed(reported_depth_, queue_.size());
  reported_depth_ = queue_.size();
}

void Session::ReleaseQueueDepth() {
  absl::MutexLock lock(&mu_);
  if (depths_ == nullptr) return;
  depths_->Changed(reported_depth_, 0);
  reported_depth_ = 0;
  depths_ = nullptr;
}

}  // namespace nereid::gm
