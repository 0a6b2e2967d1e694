#include "common/kube/event_recorder.h"

#include <functional>
#include <list>
#include <unordered_map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/kube/errors.h"
#include "common/kube/resource.h"
#include "common/kube/thread_name.h"
#include "common/log/log.h"
#include "common/strings/absl_compat.h"
#include "common/time/token_bucket.h"

namespace nereid::kube {
namespace {

// A map that forgets its least recently used entries beyond `capacity`, so per-object state stays
// bounded however many objects come and go.
template <typename V>
class LruMap {
 public:
  explicit LruMap(size_t capacity) : capacity_(capacity > 0 ? capacity : 1) {}

  V* Find(const std::string& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    entries_.splice(entries_.begin(), entries_, it->second);
    return &it->second->second;
  }

  V& Put(const std::string& key, V value) {
    if (V* existing = Find(key)) {
      *existing = std::move(value);
      return *existing;
    }
    entries_.emplace_front(key, std::move(value));
    index_[key] = entries_.begin();
    while (entries_.size() > capacity_) {
      index_.erase(entries_.back().first);
      entries_.pop_back();
    }
    return entries_.front().second;
  }

 private:
  const size_t capacity_;
  std::list<std::pair<std::string, V>> entries_;
  std::unordered_map<std::string, typename std::list<std::pair<std::string, V>>::iterator> index_;
};

bool Retriable(const absl::Status& status) {
  return !(status.ok() || IsInvalid(status) || IsForbidden(status) || IsUnauthorized(status) ||
           absl::IsAlreadyExists(status) || absl::IsNotFound(status) || IsConflict(status));
}

}  // namespace

class EventRecorder::State {
 public:
  struct Aggregate {
    std::string ns;
    std::string name;
    int64_t count = 0;
    std::string first_timestamp;
    absl::Time last_seen;
  };

  explicit State(size_t capacity) : buckets(capacity), aggregates(capacity) {}

  LruMap<std::unique_ptr<TokenBucket>> buckets;
  LruMap<Aggregate> aggregates;
};

std::string_view EventTypeName(EventType type) {
  return type == EventType::kWarning ? "Warning" : "Normal";
}

ObjectReference ObjectReference::FromObject(const Json& object) {
  ObjectReference ref;
  ref.api_version = StringAt(object, "apiVersion");
  ref.kind = StringAt(object, "kind");
  ref.ns = Namespace(object);
  ref.name = Name(object);
  ref.uid = Uid(object);
  ref.resource_version = ResourceVersion(object);
  return ref;
}

Json ObjectReference::ToJson() const {
  Json ref = Json::object();
  if (!api_version.empty()) ref["apiVersion"] = api_version;
  if (!kind.empty()) ref["kind"] = kind;
  if (!ns.empty()) ref["namespace"] = ns;
  ref["name"] = name;
  if (!uid.empty()) ref["uid"] = uid;
  if (!resource_version.empty()) ref["resourceVersion"] = resource_version;
  return ref;
}

EventRecorder::EventRecorder(KubeClient* client, EventRecorderOptions options, Clock* clock)
    : client_(client),
      options_(std::move(options)),
      clock_(clock != nullptr ? clock : Clock::Real()),
      state_(std::make_unique<State>(options_.cache_size)) {}

EventRecorder::~EventRecorder() { Stop(); }

void EventRecorder::Start() {
  absl::MutexLock lock(&mu_);
  if (started_ || stopping_) return;
  started_ = true;
  thread_ = std::thread([this] { Run(); });
}

void EventRecorder::Stop(absl::Duration drain_timeout) {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    const absl::Time deadline = drain_timeout == absl::InfiniteDuration()
                                    ? absl::InfiniteFuture()
                                    : clock_->Now() + drain_timeout;
    if (deadline < drain_deadline_) {
      drain_deadline_ = deadline;
      drain_timeout_ = drain_timeout;
    }
  }
  if (thread_.joinable()) thread_.join();
  absl::MutexLock lock(&mu_);
  if (!queue_.empty()) DropQueuedLocked("the recorder was never started");
}

void EventRecorder::DropQueuedLocked(std::string_view why) {
  const size_t dropped = queue_.size();
  stats_.dropped_at_stop += static_cast<int64_t>(dropped);
  queue_.clear();
  queued_.clear();
  LOG(WARNING) << "events: " << dropped << " queued Events dropped at shutdown (" << why << ")";
}

EventRecorder::Stats EventRecorder::GetStats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

bool EventRecorder::WaitIdle(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return queue_.empty() && !sending_; };
  return mu_.AwaitWithTimeout(absl::Condition(&idle), timeout);
}

void EventRecorder::Record(const Json& object, EventType type, std::string_view reason,
                           std::string_view message) {
  Record(ObjectReference::FromObject(object), type, reason, message);
}

void EventRecorder::Record(const ObjectReference& object, EventType type, std::string_view reason,
                           std::string_view message) {
  const absl::Time now = clock_->Now();
  const std::string spam_key =
      absl::StrJoin({options_.component, options_.host, object.kind, object.ns, object.name,
                     object.uid, object.api_version},
                    "\x1f");
  absl::MutexLock lock(&mu_);
  if (stopping_) return;
  std::unique_ptr<TokenBucket>* bucket = state_->buckets.Find(spam_key);
  if (bucket == nullptr) {
    const double qps = 1.0 / absl::ToDoubleSeconds(options_.refill_interval);
    bucket =
        &state_->buckets.Put(spam_key, std::make_unique<TokenBucket>(qps, options_.burst, clock_));
  }
  if (!(*bucket)->TryAcquire()) {
    ++stats_.dropped_rate_limited;
    LOG(DEBUG) << "event for " << MakeKey(object.ns, object.name) << " (" << reason
               << ") dropped: rate limited";
    return;
  }
  if (queue_.size() >= options_.queue_capacity) {
    ++stats_.dropped_queue_full;
    LOG(DEBUG) << "event for " << MakeKey(object.ns, object.name) << " (" << reason
               << ") dropped: queue full";
    return;
  }
  ++stats_.recorded;
  if (options_.coalesce_window > absl::ZeroDuration()) {
    std::string coalesce_key =
        absl::StrJoin({object.kind, object.ns, object.name, object.uid, object.api_version,
                       std::string(EventTypeName(type)), std::string(reason)},
                      "\x1f");
    if (auto it = queued_.find(coalesce_key); it != queued_.end()) {
      Coalesce(*it->second, message);
      ++stats_.coalesced;
      return;
    }
    queue_.push_back(
        Pending{object, type, std::string(reason), std::string(message), now, 1, coalesce_key});
    queued_[std::move(coalesce_key)] = &queue_.back();
    return;
  }
  queue_.push_back(Pending{object, type, std::string(reason), std::string(message), now, 1, ""});
}

void EventRecorder::Coalesce(Pending& into, std::string_view message) const {
  ++into.count;
  if (into.message == message || into.message.size() >= options_.max_message_bytes) return;
  // Distinct messages only: "Created Deployment a; Created Deployment b".
  for (absl::string_view part : absl::StrSplit(into.message, "; ")) {
    if (part == ToAbsl(message)) return;
  }
  absl::StrAppend(&into.message, "; ", ToAbsl(message));
  if (into.message.size() > options_.max_message_bytes) {
    into.message.resize(options_.max_message_bytes - 3);
    into.message += "...";
  }
}

void EventRecorder::Run() {
  SetCurrentThreadName("event-sender");
  while (true) {
    Pending event;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]()
                       ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !queue_.empty() || stopping_; };
      mu_.Await(absl::Condition(&ready));
      if (queue_.empty()) return;  // Stopping and drained.
      if (stopping_ && clock_->Now() >= drain_deadline_) {
        DropQueuedLocked(absl::StrCat("not sent within the drain limit of ",
                                      absl::FormatDuration(drain_timeout_)));
        return;
      }
      // The oldest event waits out its coalescing window (Stop sends at once).
      if (options_.coalesce_window > absl::ZeroDuration()) {
        clock_->AwaitWithDeadline(&mu_, absl::Condition(&stopping_),
                                  queue_.front().time + options_.coalesce_window);
      }
      event = std::move(queue_.front());
      if (!event.coalesce_key.empty()) queued_.erase(event.coalesce_key);
      queue_.pop_front();
      sending_ = true;
    }
    Send(event);
    absl::MutexLock lock(&mu_);
    sending_ = false;
  }
}

absl::Status EventRecorder::WithRetries(const std::function<absl::Status()>& attempt) {
  absl::Status status;
  const int attempts = std::max(1, options_.max_attempts);
  for (int i = 0; i < attempts; ++i) {
    status = attempt();
    if (!Retriable(status) || i + 1 == attempts) return status;
    absl::MutexLock lock(&mu_);
    if (stopping_) return status;  // Shutting down: one attempt only.
    clock_->AwaitWithDeadline(&mu_, absl::Condition(&stopping_),
                              clock_->Now() + options_.retry_interval);
  }
  return status;
}

std::string EventRecorder::NewEventName(const std::string& object_name) {
  int64_t nanos = absl::ToUnixNanos(clock_->Now());
  if (nanos <= last_name_nanos_) nanos = last_name_nanos_ + 1;  // Unique even if time stands.
  last_name_nanos_ = nanos;
  return absl::StrCat(object_name, ".", absl::Hex(nanos));
}

void EventRecorder::Send(const Pending& event) {
  const std::string object_key = MakeKey(event.object.ns, event.object.name);
  const std::string aggregate_key =
      absl::StrJoin({options_.component, options_.host, event.object.kind, event.object.ns,
                     event.object.name, event.object.uid, event.object.api_version,
                     std::string(EventTypeName(event.type)), event.reason, event.message},
                    "\x1f");
  const std::string timestamp = FormatTimestamp(event.time);

  // A repeat within the window: bump the existing Event.
  State::Aggregate* aggregate = state_->aggregates.Find(aggregate_key);
  int64_t count = event.count;
  std::string first_timestamp = timestamp;
  if (aggregate != nullptr && event.time - aggregate->last_seen <= options_.aggregation_window) {
    count = aggregate->count + event.count;
    first_timestamp = aggregate->first_timestamp;
    const Json patch = {{"count", count}, {"lastTimestamp", timestamp}};
    absl::Status patched = WithRetries([&] {
      return client_
          ->Patch(resources::Events(), aggregate->ns, aggregate->name, PatchType::kMerge, patch)
          .status();
    });
    if (patched.ok()) {
      aggregate->count = count;
      aggregate->last_seen = event.time;
      absl::MutexLock lock(&mu_);
      ++stats_.aggregated;
      return;
    }
    if (!absl::IsNotFound(patched)) {
      LOG(WARNING) << "event for " << object_key << " (" << event.reason
                   << "): patch failed: " << patched;
      absl::MutexLock lock(&mu_);
      ++stats_.failed;
      return;
    }
    // The Event expired or was deleted: create it again with the running count.
  }

  const std::string ns = event.object.ns.empty() ? "default" : event.object.ns;
  Json body = {{"apiVersion", "v1"},
               {"kind", "Event"},
               {"metadata", {{"namespace", ns}}},
               {"involvedObject", event.object.ToJson()},
               {"reason", event.reason},
               {"message", event.message},
               {"type", EventTypeName(event.type)},
               {"source", {{"component", options_.component}}},
               {"firstTimestamp", first_timestamp},
               {"lastTimestamp", timestamp},
               {"count", count},
               {"reportingComponent", options_.component},
               {"reportingInstance", options_.reporting_instance}};
  if (!options_.host.empty()) body["source"]["host"] = options_.host;
  std::string name;
  absl::Status created = WithRetries([&] {
    name = NewEventName(event.object.name);
    body["metadata"]["name"] = name;
    absl::Status status = client_->Create(resources::Events(), ns, body).status();
    // A name clash with another recorder: the next attempt gets a new name.
    return absl::IsAlreadyExists(status) ? absl::UnavailableError(status.message()) : status;
  });
  if (!created.ok()) {
    LOG(WARNING) << "event for " << object_key << " (" << event.reason
                 << "): create failed: " << created;
    absl::MutexLock lock(&mu_);
    ++stats_.failed;
    return;
  }
  state_->aggregates.Put(aggregate_key,
                         State::Aggregate{ns, name, count, first_timestamp, event.time});
  absl::MutexLock lock(&mu_);
  ++stats_.created;
}

}  // namespace nereid::kube
