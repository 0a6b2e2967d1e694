#pragma once

// EventRecorder: core/v1 Events about objects, for users (`kubectl describe` shows them), in the
// manner of client-go's record.EventRecorder + EventCorrelator:
//   - Record() never blocks a reconciler: it rate-limits, then puts the event on a bounded queue
//     for one sender thread. Queue full → the event is dropped and counted.
//   - Per-object rate limit (client-go's spam filter): a token bucket of 25 events refilled at one
//     per 5 minutes per involved object and source; excess events are dropped and counted.
//   - Aggregation: a repeat of the same (object, type, reason, message, source) within
//     `aggregation_window` of the last one patches count and lastTimestamp of the existing Event
//     instead of creating another (if that Event is gone, a new one is created).
//   - Coalescing (opt-in, `coalesce_window` > 0): an event waits that long in the queue, and a
//     Record of the same (object, type, reason) meanwhile joins it — its message appended ("; ",
//     distinct messages only, capped) and its count added — so a reconcile that creates three
//     children costs one Event POST, not three, and a burst over many objects costs one per object.
//   - Events are named "<object name>.<hex timestamp>" like client-go, in the object's namespace
//     ("default" for cluster-scoped objects).
// Sending failures are retried a few times on the Clock, then counted and dropped: events are
// best-effort, never worth blocking or crashing for. So is the drain at Stop: it sends through
// the client (and its rate limiter) until a deadline, then drops what is left, counted and logged,
// so a throttled backlog cannot hold a stopping process past its grace period. Thread-safe.

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/kube/client.h"
#include "common/kube/object.h"
#include "common/time/clock.h"

namespace nereid::kube {

enum class EventType { kNormal, kWarning };
std::string_view EventTypeName(EventType type);

// core/v1 ObjectReference: what an Event is about.
struct ObjectReference {
  std::string api_version;
  std::string kind;
  std::string ns;
  std::string name;
  std::string uid;
  std::string resource_version;

  static ObjectReference FromObject(const Json& object);
  Json ToJson() const;
};

struct EventRecorderOptions {
  std::string component;           // source.component and reportingComponent, e.g. "nereid-gm".
  std::string host;                // source.host (optional).
  std::string reporting_instance;  // e.g. the pod name (optional).
  size_t queue_capacity = 1000;
  int burst = 25;                                     // Per-object token bucket...
  absl::Duration refill_interval = absl::Minutes(5);  // ...refilled one token per interval.
  absl::Duration aggregation_window = absl::Minutes(10);
  // How long an event waits to be joined by others of its object, type and reason; zero sends at
  // once (and joins only what is still queued behind a slow API server: nothing by default).
  absl::Duration coalesce_window = absl::ZeroDuration();
  size_t max_message_bytes = 1024;  // A coalesced message is cut here (upstream's limit).
  size_t cache_size = 4096;  // Objects/events remembered for rate limits and aggregation.
  int max_attempts = 3;
  absl::Duration retry_interval = absl::Seconds(1);
};

class EventRecorder {
 public:
  struct Stats {
    int64_t recorded = 0;  // Accepted onto the queue.
    int64_t created = 0;
    int64_t aggregated = 0;  // Patched into an existing Event.
    int64_t coalesced = 0;   // Joined a queued event of the same object, type and reason.
    int64_t dropped_rate_limited = 0;
    int64_t dropped_queue_full = 0;
    int64_t failed = 0;  // Gave up after retries.
    int64_t dropped_at_stop = 0;  // Still queued when Stop's drain deadline passed.
  };

  EventRecorder(KubeClient* client, EventRecorderOptions options, Clock* clock = nullptr);
  ~EventRecorder();
  EventRecorder(const EventRecorder&) = delete;
  EventRecorder& operator=(const EventRecorder&) = delete;

  // Starts the sender. Events recorded before Start wait in the queue.
  void Start();
  // Sends what is queued (one attempt each, no retry waits) for at most `drain_timeout` on the
  // Clock, drops the rest (Stats::dropped_at_stop, one log line with the count), then stops the
  // sender. A send under way when the deadline passes finishes: the overrun is one request and its
  // wait in the client's rate limiter. A later Stop never extends an earlier one's deadline.
  void Stop(absl::Duration drain_timeout = absl::InfiniteDuration());

  void Record(const Json& object, EventType type, std::string_view reason,
              std::string_view message);
  void Record(const ObjectReference& object, EventType type, std::string_view reason,
              std::string_view message);

  Stats GetStats() const;
  // Waits (real time, up to `timeout`) until the queue is empty and nothing is being sent.
  bool WaitIdle(absl::Duration timeout);

 private:
  struct Pending {
    ObjectReference object;
    EventType type;
    std::string reason;
    std::string message;
    absl::Time time;   // of the first occurrence
    int64_t count = 1;  // occurrences coalesced into this one
    std::string coalesce_key;  // "" when not indexed
  };
  class State;  // Rate limit buckets and the aggregation cache.

  void Run();
  // Drops every queued event at stop, counted and logged with `why`.
  void DropQueuedLocked(std::string_view why) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Send(const Pending& event);
  // Joins one more occurrence into a queued event.
  void Coalesce(Pending& into, std::string_view message) const;
  // Calls `attempt` up to max_attempts times while it fails with a retriable error.
  absl::Status WithRetries(const std::function<absl::Status()>& attempt);
  std::string NewEventName(const std::string& object_name);

  KubeClient* const client_;
  const EventRecorderOptions options_;
  Clock* const clock_;
  std::unique_ptr<State> state_;  // Rate limits: guarded by mu_. Aggregation: sender thread only.
  int64_t last_name_nanos_ = 0;   // Sender thread only.

  mutable absl::Mutex mu_;
  std::deque<Pending> queue_ ABSL_GUARDED_BY(mu_);
  // Queued events by (object, type, reason), for coalescing. Deque elements stay put while others
  // are pushed at the back or popped at the front.
  std::unordered_map<std::string, Pending*> queued_ ABSL_GUARDED_BY(mu_);
  bool sending_ ABSL_GUARDED_BY(mu_) = false;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  absl::Time drain_deadline_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
  absl::Duration drain_timeout_ ABSL_GUARDED_BY(mu_) = absl::InfiniteDuration();  // For the log.
  Stats stats_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace nereid::kube
