#include "tools/devapiserver/watch.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/kube/errors.h"

namespace nereid::devapi {

bool Selection::Matches(const Json& object) const {
  if (!ns.empty() && kube::Namespace(object) != ns) return false;
  if (!labels.empty() && !labels.Matches(kube::Labels(object))) return false;
  if (!fields.empty() && !fields.Matches(object, getter)) return false;
  return true;
}

Watcher::Watcher(Selection selection, std::string api_version, size_t max_queue,
                 int64_t start_version)
    : selection_(std::move(selection)),
      api_version_(std::move(api_version)),
      max_queue_(max_queue),
      offered_version_(start_version) {}

void Watcher::PushLocked(kube::WatchEvent::Type type, ObjectPtr object, int64_t version) {
  if (closed_) return;
  if (queue_.size() >= max_queue_) {
    // A reader this far behind would make the server buffer without bound; end its stream so it
    // re-watches (from its last version, or relists on 410), as the real server does.
    closed_ = true;
    close_reason_ = absl::ResourceExhaustedError("watcher fell too far behind");
    return;
  }
  queue_.push_back({type, std::move(object), version});
}

void Watcher::Offer(const Event& event) {
  absl::MutexLock lock(&mu_);
  offered_version_ = std::max(offered_version_, event.resource_version);
  if (event.storage_key != selection_.storage_key) return;
  using Type = kube::WatchEvent::Type;
  bool now = event.type != Type::kDeleted && selection_.Matches(*event.object);
  bool before = event.previous != nullptr && selection_.Matches(*event.previous);
  if (event.type == Type::kDeleted) {
    if (selection_.Matches(*event.object)) PushLocked(Type::kDeleted, event.object, event.resource_version);
    return;
  }
  if (now && before) {
    PushLocked(Type::kModified, event.object, event.resource_version);
  } else if (now) {
    PushLocked(Type::kAdded, event.object, event.resource_version);
  } else if (before) {
    // Left the selection: watchers see it go away, carrying the new state.
    PushLocked(Type::kDeleted, event.object, event.resource_version);
  }
}

void Watcher::OfferInitial(const ObjectPtr& object, int64_t version) {
  absl::MutexLock lock(&mu_);
  if (selection_.Matches(*object)) PushLocked(kube::WatchEvent::Type::kAdded, object, version);
}

Watcher::Result Watcher::Next(Clock* clock, absl::Time deadline, kube::WatchEvent* event) {
  absl::MutexLock lock(&mu_);
  auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !queue_.empty() || closed_; };
  if (!ready()) {
    clock->AwaitWithDeadline(&mu_, absl::Condition(&ready), deadline);
  }
  if (!queue_.empty()) {
    Item item = std::move(queue_.front());
    queue_.pop_front();
    event->type = item.type;
    event->object = *item.object;
    if (!api_version_.empty()) event->object["apiVersion"] = api_version_;
    return Result::kEvent;
  }
  return closed_ ? Result::kClosed : Result::kTimeout;
}

std::optional<int64_t> Watcher::BookmarkVersion() const {
  absl::MutexLock lock(&mu_);
  if (!queue_.empty()) return std::nullopt;
  return offered_version_;
}

void Watcher::Close() {
  absl::MutexLock lock(&mu_);
  closed_ = true;
}

void Watcher::Expire() {
  absl::MutexLock lock(&mu_);
  closed_ = true;
  close_reason_ = kube::GoneError("the resource version requested is too old; relist");
}

bool Watcher::closed() const {
  absl::MutexLock lock(&mu_);
  return closed_;
}

absl::Status Watcher::close_reason() const {
  absl::MutexLock lock(&mu_);
  return close_reason_;
}

WatchHub::WatchHub(size_t history_size) : history_size_(std::max<size_t>(history_size, 1)) {}

void WatchHub::Publish(Event event) {
  for (auto it = watchers_.begin(); it != watchers_.end();) {
    std::shared_ptr<Watcher> w = it->lock();
    if (w == nullptr || w->closed()) {
      it = watchers_.erase(it);
      continue;
    }
    w->Offer(event);
    ++it;
  }
  history_.push_back(std::move(event));
  while (history_.size() > history_size_) {
    // Resuming from the evicted version itself would need the events after it, which are all
    // still here; resuming from anything older would not.
    floor_ = std::max(floor_, history_.front().resource_version);
    history_.pop_front();
  }
}

void WatchHub::Replay(int64_t version, Watcher& watcher) const {
  for (const Event& e : history_) {
    if (e.resource_version > version) watcher.Offer(e);
  }
}

std::vector<const Event*> WatchHub::EventsAfter(int64_t version,
                                                const std::string& storage_key) const {
  std::vector<const Event*> out;
  for (const Event& e : history_) {
    if (e.resource_version > version && e.storage_key == storage_key) out.push_back(&e);
  }
  return out;
}

void WatchHub::Register(std::shared_ptr<Watcher> watcher) { watchers_.push_back(std::move(watcher)); }

void WatchHub::CloseAll() {
  for (auto& weak : watchers_) {
    if (auto w = weak.lock()) w->Close();
  }
  watchers_.clear();
}

void WatchHub::ExpireAll(int64_t current_version) {
  history_.clear();
  floor_ = current_version + 1;
  for (auto& weak : watchers_) {
    if (auto w = weak.lock()) w->Expire();
  }
  watchers_.clear();
}

WatchSession::WatchSession(std::shared_ptr<Watcher> watcher, Clock* clock,
                           WatchSessionOptions options, std::string kind, std::string api_version)
    : watcher_(std::move(watcher)),
      clock_(clock),
      options_(options),
      kind_(std::move(kind)),
      api_version_(std::move(api_version)) {
  absl::Time now = clock_->Now();
  next_bookmark_ = now + options_.bookmark_interval;
  last_write_ = now;
}

WatchSession::Step WatchSession::Next(kube::WatchEvent* event) {
  while (true) {
    absl::Time now = clock_->Now();
    if (now >= options_.deadline) return Step::kEnd;
    absl::Time wake = options_.deadline;
    if (options_.allow_bookmarks) {
      wake = std::min(wake, next_bookmark_);
    } else {
      wake = std::min(wake, last_write_ + options_.heartbeat_interval);
    }
    Watcher::Result r = watcher_->Next(clock_, wake, event);
    now = clock_->Now();
    if (r == Watcher::Result::kEvent) {
      last_write_ = now;
      return Step::kEvent;
    }
    if (r == Watcher::Result::kClosed) {
      const absl::Status reason = watcher_->close_reason();
      if (ended_ || !kube::IsGone(reason)) return Step::kEnd;
      ended_ = true;
      event->type = kube::WatchEvent::Type::kError;
      event->object = kube::StatusToJson(reason);
      return Step::kEvent;
    }
    if (now >= options_.deadline) return Step::kEnd;
    if (options_.allow_bookmarks && now >= next_bookmark_) {
      next_bookmark_ = now + options_.bookmark_interval;
      std::optional<int64_t> version = watcher_->BookmarkVersion();
      if (!version) continue;  // events pending: deliver them first
      event->type = kube::WatchEvent::Type::kBookmark;
      event->object = {{"kind", kind_},
                       {"apiVersion", api_version_},
                       {"metadata", {{"resourceVersion", std::to_string(*version)}}}};
      last_write_ = now;
      return Step::kBookmark;
    }
    if (!options_.allow_bookmarks && now >= last_write_ + options_.heartbeat_interval) {
      last_write_ = now;
      return Step::kHeartbeat;
    }
  }
}

}  // namespace nereid::devapi
