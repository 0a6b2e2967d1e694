#pragma once

// Intake of worker reports (POST /sedna/workers/{worker}/info, Sedna's call: see
// docs/sedna-compatibility.md), independent of
// HTTP: the server hands over the path's worker name and the body and writes the reply
// {"Status": status, "Message": message} that Submit returns.
//
//   body not JSON / wrong field types   400 "read worker(name=W) message body failed, error: ..."
//   body.name != {worker}               400 "worker name(name=W) in the api is different from
//                                            that(name=N) in the message body"   (as Sedna's LC)
//   ownerKind missing, "default" (the SDK's FederatedLearning never sets its kind) or
//   "multiedgetrackingservice" (the SDK's tracking classes; no such kind exists)
//                                       attributed by the worker: the owner the GM placed it for
//                                       on this node (ReportSink::AttributeWorker), then as below;
//                                       when the node holds no such owner, as the next case
//   ownerKind the LC has no upstream for (Sedna's LC silently drops these too)
//                                       200 OK, counted as unknown_owner_kind, kept in the table
//                                       for the operator API, not forwarded
//   known ownerKind without namespace or ownerName
//                                       400: the report could never reach its owner
//   otherwise                           mapped into an edge.v1.WorkerReport about the owner
//                                       {Kind, namespace, ownerName} and stored in the outbox
//                                       (key owner + worker name: the latest report per worker
//                                       wins while the cloud is away) → 200 OK; a storage failure
//                                       → 500 (the SDK logs it; nothing is half-stored).
//
// The last report of each worker is kept in a bounded in-memory table (oldest evicted) for
// GET /api/v1/workers. Thread-safe.

#include <cstdint>
#include <list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/time/clock.h"
#include "nereid/edge/v1/status.pb.h"

namespace nereid::lc::worker {

// The object a worker report is about: an edge.v1 ObjectRef kind ("FederatedLearningJob") and
// name, in the report's namespace.
struct ReportOwner {
  std::string kind;
  std::string name;
};

// Where forwarded reports go: the LC's durable outbox. Enqueue fills in the owner's uid and the
// observed version when the node holds the owner, and returns once the report is committed.
class ReportSink {
 public:
  virtual ~ReportSink() = default;
  virtual absl::Status Enqueue(edge::v1::StatusReport report) = 0;
  // The owner of worker `worker` in `ns` among what the GM placed on this node, for a report that
  // does not say its kind; `owner_name` is the name the report claims. NotFound when the node
  // holds none, or several that could be it.
  virtual absl::StatusOr<ReportOwner> AttributeWorker(std::string_view /*ns*/,
                                                      std::string_view /*worker*/,
                                                      std::string_view /*owner_name*/) {
    return absl::NotFoundError("no placement to attribute workers by");
  }
};

// Whether a report's ownerKind leaves the owner to be attributed by the worker: missing,
// "default" or "multiedgetrackingservice" (case-insensitive).
bool NeedsAttribution(std::string_view owner_kind);

struct IntakeReply {
  int status = 200;  // HTTP status, also the body's "Status"
  std::string message = "OK";
};

// One worker's last report, as the operator API shows it.
struct WorkerRecord {
  std::string name;
  std::string ns;
  std::string owner_kind;  // as the worker sent it
  std::string owner_name;
  std::string kind;
  std::string status;
  std::string owner_info_json;  // "" when absent or larger than the table keeps
  std::string results_json;
  bool details_truncated = false;
  bool forwarded = false;  // stored in the outbox for the GM (false: unknown owner kind)
  // The kind it was forwarded under when the worker did not say it ("" otherwise).
  std::string attributed_kind;
  absl::Time received;
  uint64_t reports = 0;  // reports received from this worker since the LC started
};

class WorkerIntake {
 public:
  struct Options {
    ReportSink* sink = nullptr;  // required
    Clock* clock = Clock::Real();
    size_t max_workers = 256;             // table size; the least recently reporting is evicted
    size_t max_detail_bytes = 8 << 10;    // per ownerInfo/results JSON kept in the table
  };

  struct Stats {
    uint64_t received = 0;    // every Submit
    uint64_t forwarded = 0;   // stored in the outbox
    uint64_t unknown_owner_kind = 0;
    uint64_t attributed = 0;  // forwarded under the owner found by the worker (also forwarded)
    uint64_t invalid = 0;     // answered 400
    uint64_t failed = 0;      // answered 500
  };

  explicit WorkerIntake(Options options) : options_(std::move(options)) {}

  IntakeReply Submit(std::string_view worker, std::string_view body);

  // Most recent first.
  std::vector<WorkerRecord> Workers() const;
  size_t size() const;
  Stats stats() const;

 private:
  void Remember(WorkerRecord record) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  mutable absl::Mutex mu_;
  // Recency list (front = most recent) + index by "ownerKind/namespace/ownerName/name".
  std::list<WorkerRecord> records_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::list<WorkerRecord>::iterator> index_ ABSL_GUARDED_BY(mu_);
  Stats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nereid::lc::worker
