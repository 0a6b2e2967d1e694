#pragma once

// ReportRouter: the edge hub's ReportHandler. It hands each admitted StatusReport to the
// controller that owns the report's kind (ObjectRef.kind: "Dataset", "Model", ...; for worker
// reports the owning object's kind), on a small pool of report workers — never on a gRPC thread —
// and completes the report with the sink's outcome, which the hub turns into the ReportAck.
//
//   unknown kind              → Rejected "UnknownKind" at once (no controller will ever take it)
//   queue full                → Retry "Busy" (the LC keeps the report and resends)
//   stopping / stopped        → Retry "ShuttingDown" (the LC resends to the next leader)
//   sink throws               → Retry "InternalError" (logged)
//
// The hub hands over reports about one object one at a time, so sinks see them in order; reports
// about different objects run in parallel on the workers. Thread-safe.

#include <cstddef>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/time/clock.h"
#include "globalmanager/controllers/controller_context.h"
#include "globalmanager/controllers/controller_metrics.h"
#include "globalmanager/edgehub/report_handler.h"
#include "nereid/edge/v1/status.pb.h"

namespace nereid::gm {

// What a controller implements to receive the reports about its kind.
class ReportSink {
 public:
  virtual ~ReportSink() = default;
  // Runs on a report worker; may block on the Kubernetes API (bounded by the client's timeouts).
  // `node` is the node the hub authenticated; the hub already checked that it is sent the object
  // (RefuseForeignReport, edgehub/report_ownership.h), so a sink does not check it again.
  virtual ReportOutcome HandleReport(std::string_view node,
                                     const edge::v1::StatusReport& report) = 0;
};

// Rejected Invalid for a report that lacks the payload this sink takes (`what`, e.g. "a worker
// report") or names another kind.
ReportOutcome RejectedPayload(const edge::v1::StatusReport& report, std::string_view what);

// The outcome of a report whose status write (WriteStatus) failed with `s`, logged:
//   NotFound            → Rejected ObjectGone (the object is gone or was re-created: never
//   writable); FailedPrecondition  → Rejected NotThisNode (the mutator found the node has no say);
//   anything else       → Retry Conflict / ApiError (the LC resends).
// `what` and `key` name the object in the log ("dataset", "ns/name").
ReportOutcome ReportWriteFailure(std::string_view what, std::string_view key, std::string_view node,
                                 const edge::v1::StatusReport& report, const absl::Status& s);

// Registers `sink` for the reports about `kind` with the context's router; nothing to do without
// one (a GM without an edge hub, unit tests that call HandleReport directly).
absl::Status RegisterReportSink(const ControllerContext& context, std::string_view kind,
                                ReportSink* sink);

class ReportRouter final : public ReportHandler {
 public:
  struct Options {
    int workers = 4;
    std::size_t max_queue = 100'000;
    Clock* clock = Clock::Real();
    ControllerMetrics* metrics = nullptr;  // optional
  };

  explicit ReportRouter(Options options);
  ~ReportRouter() override;
  ReportRouter(const ReportRouter&) = delete;
  ReportRouter& operator=(const ReportRouter&) = delete;

  // `sink` takes the reports about `kind`; it must outlive the router's Stop(). AlreadyExists when
  // the kind has a sink.
  absl::Status Register(std::string kind, ReportSink* sink);
  bool Handles(std::string_view kind) const;

  // Starts the workers; reports received earlier wait in the queue.
  void Start();
  // Completes queued reports with Retry, waits for the ones being handled, joins the workers.
  void Stop();

  void HandleReport(std::string_view node, std::shared_ptr<const edge::v1::StatusReport> report,
                    ReportCompletion done) override;

  std::size_t queued() const;

 private:
  struct Job {
    std::string node;
    std::shared_ptr<const edge::v1::StatusReport> report;
    ReportCompletion done;
    ReportSink* sink = nullptr;
    absl::Time received;
  };

  void Worker();
  void Finish(const Job& job, ReportOutcome outcome);

  const Options options_;
  mutable absl::Mutex mu_;
  std::map<std::string, ReportSink*, std::less<>> sinks_ ABSL_GUARDED_BY(mu_);
  std::deque<Job> queue_ ABSL_GUARDED_BY(mu_);
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;  // started by Start, joined by Stop (one caller each)
};

}  // namespace nereid::gm
