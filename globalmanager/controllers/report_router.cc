#include "globalmanager/controllers/report_router.h"

#include <exception>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/kube/errors.h"
#include "common/kube/thread_name.h"
#include "common/log/log.h"
#include "common/net/edge_protocol.h"
#include "common/strings/absl_compat.h"

namespace nereid::gm {

ReportOutcome RejectedPayload(const edge::v1::StatusReport& report, std::string_view what) {
  return ReportOutcome::Rejected(
      "Invalid", absl::StrCat("report ", report.seq(), " about ", report.ref().kind(), " ",
                              report.ref().namespace_(), "/", report.ref().name(),
                              " does not carry ", ToAbsl(what)));
}

ReportOutcome ReportWriteFailure(std::string_view what, std::string_view key, std::string_view node,
                                 const edge::v1::StatusReport& report, const absl::Status& s) {
  if (absl::IsNotFound(s)) return ReportOutcome::Rejected("ObjectGone", std::string(s.message()));
  if (s.code() == absl::StatusCode::kFailedPrecondition) {
    LOG(WARNING) << what << " " << key << ": report " << report.seq() << " from node " << node
                 << " refused: " << s.message();
    return ReportOutcome::Rejected("NotThisNode", std::string(s.message()));
  }
  LOG(WARNING) << what << " " << key << ": report " << report.seq() << " from node " << node
               << " not written: " << s;
  return ReportOutcome::Retry(kube::IsConflict(s) ? "Conflict" : "ApiError",
                              std::string(s.message()));
}
absl::Status RegisterReportSink(const ControllerContext& context, std::string_view kind,
                                ReportSink* sink) {
  if (context.reports == nullptr) return absl::OkStatus();
  return context.reports->Register(std::string(kind), sink);
}

namespace {

ControllerMetrics::ReportResult ResultOf(const ReportOutcome& outcome) {
  switch (outcome.code) {
    case ReportOutcome::Code::kAccepted: return ControllerMetrics::ReportResult::kAccepted;
    case ReportOutcome::Code::kRejected: return ControllerMetrics::ReportResult::kRejected;
    case ReportOutcome::Code::kRetry: return ControllerMetrics::ReportResult::kRetry;
  }
  return ControllerMetrics::ReportResult::kRetry;
}

}  // namespace

ReportRouter::ReportRouter(Options options) : options_(std::move(options)) {}

ReportRouter::~ReportRouter() { Stop(); }

absl::Status ReportRouter::Register(std::string kind, ReportSink* sink) {
  if (kind.empty() || sink == nullptr) {
    return absl::InvalidArgumentError("ReportRouter::Register: empty kind or null sink");
  }
  absl::MutexLock lock(&mu_);
  auto [it, inserted] = sinks_.try_emplace(kind, sink);
  if (!inserted) {
    return absl::AlreadyExistsError(absl::StrCat("reports about ", kind, " already have a sink"));
  }
  return absl::OkStatus();
}

bool ReportRouter::Handles(std::string_view kind) const {
  absl::MutexLock lock(&mu_);
  return sinks_.find(kind) != sinks_.end();
}

void ReportRouter::Start() {
  absl::MutexLock lock(&mu_);
  if (started_ || stopping_) return;
  started_ = true;
  const int workers = options_.workers > 0 ? options_.workers : 1;
  for (int i = 0; i < workers; ++i) {
    threads_.emplace_back([this, i] {
      kube::SetCurrentThreadName(absl::StrCat("gm-report-", i));
      Worker();
    });
  }
}

void ReportRouter::Stop() {
  std::deque<Job> dropped;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_ && threads_.empty() && queue_.empty()) return;
    stopping_ = true;
    dropped.swap(queue_);
    if (options_.metrics != nullptr) options_.metrics->report_queue_depth().Set(0);
  }
  for (const Job& job : dropped) {
    Finish(job, ReportOutcome::Retry("ShuttingDown", "the GM is stopping; resend later"));
  }
  for (std::thread& thread : threads_) thread.join();
  threads_.clear();
}

void ReportRouter::HandleReport(std::string_view node,
                                std::shared_ptr<const edge::v1::StatusReport> report,
                                ReportCompletion done) {
  Job job;
  job.node = std::string(node);
  job.received = options_.clock->Now();
  const std::string kind = report->ref().kind();
  job.report = std::move(report);
  job.done = std::move(done);
  std::optional<ReportOutcome> immediate;
  {
    absl::MutexLock lock(&mu_);
    auto it = sinks_.find(kind);
    if (it == sinks_.end()) {
      immediate = ReportOutcome::Rejected(
          "UnknownKind", absl::StrCat("this GM has no controller for reports about kind \"", kind,
                                      "\""));
    } else if (stopping_) {
      immediate = ReportOutcome::Retry("ShuttingDown", "the GM is stopping; resend later");
    } else if (queue_.size() >= options_.max_queue) {
      immediate = ReportOutcome::Retry("Busy", "the GM's report queue is full; resend later");
    } else {
      job.sink = it->second;
      queue_.push_back(std::move(job));
      if (options_.metrics != nullptr) options_.metrics->report_queue_depth().Set(queue_.size());
      return;
    }
  }
  Finish(job, *std::move(immediate));
}

std::size_t ReportRouter::queued() const {
  absl::MutexLock lock(&mu_);
  return queue_.size();
}

void ReportRouter::Worker() {
  for (;;) {
    Job job;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](ReportRouter* self) ABSL_EXCLUSIVE_LOCKS_REQUIRED(self->mu_) {
            return self->stopping_ || !self->queue_.empty();
          },
          this));
      if (queue_.empty()) return;  // stopping
      job = std::move(queue_.front());
      queue_.pop_front();
      if (options_.metrics != nullptr) options_.metrics->report_queue_depth().Set(queue_.size());
    }
    ReportOutcome outcome;
    try {
      outcome = job.sink->HandleReport(job.node, *job.report);
    } catch (const std::exception& e) {
      LOG(ERROR) << "report router: node " << job.node << " report " << job.report->seq()
                 << " about " << net::RefString(job.report->ref()) << ": handler threw: "
                 << e.what();
      outcome = ReportOutcome::Retry("InternalError", e.what());
    } catch (...) {
      outcome = ReportOutcome::Retry("InternalError", "the handler threw");
    }
    Finish(job, std::move(outcome));
  }
}

void ReportRouter::Finish(const Job& job, ReportOutcome outcome) {
  if (options_.metrics != nullptr) {
    options_.metrics->ObserveReport(job.report->ref().kind(), ResultOf(outcome),
                                    options_.clock->Now() - job.received);
  }
  if (outcome.code != ReportOutcome::Code::kAccepted) {
    LOG(DEBUG) << "report router: node " << job.node << " report " << job.report->seq()
               << " about " << net::RefString(job.report->ref()) << ": " << outcome.reason
               << ": " << outcome.message;
  }
  job.done(std::move(outcome));
}

}  // namespace nereid::gm
