// The report half of EdgeHub (edge_hub.h): admitting upstream StatusReports into the
// ReportScheduler, handing them to the ReportHandler and answering them with ReportAcks.

#include "globalmanager/edgehub/edge_hub.h"

#include <algorithm>
#include <atomic>
#include <optional>
#include <utility>
#include <vector>

#include "common/log/log.h"
#include "common/net/edge_protocol.h"
#include "common/strings/absl_compat.h"
#include "globalmanager/edgehub/report_ownership.h"

namespace nereid::gm {

namespace v1 = edge::v1;

namespace {

// The reports DispatchReports is handing over on this thread, while it does: a handler that
// completes synchronously (an unknown kind, no handler) makes the completion dispatch the next
// report, which then joins this list instead of recursing once per held report.
struct DispatchInProgress {
  const EdgeHub* hub = nullptr;
  std::vector<ReportScheduler::Dispatch>* pending = nullptr;
};
thread_local DispatchInProgress t_dispatch;

std::string_view ResultName(v1::ReportResult result) {
  switch (result) {
    case v1::REPORT_ACCEPTED: return "accepted";
    case v1::REPORT_REJECTED: return "rejected";
    case v1::REPORT_RETRY: return "retry";
    default: return "unspecified";
  }
}

}  // namespace

void EdgeHub::HandleReport(const std::shared_ptr<Session>& session,
                           const v1::StatusReport& report) {
  const std::string& node = session->node();
  std::vector<Dispatch> dispatch;
  std::vector<std::shared_ptr<Session>> to_pump;
  {
    absl::MutexLock lock(&mu_);
    NodeState& state = nodes_[node];
    if (absl::Status valid = net::ValidateReport(report); !valid.ok()) {
      metrics_.reports_rejected().Increment();
      SendReportAckLocked(state, report.seq(), v1::REPORT_REJECTED, "Invalid",
                          ToStd(valid.message()));
      return;
    }
    // Before MarkSynced the registry cannot tell yet; TakeReportsLocked checks again anyway.
    if (synced_) {
      if (std::optional<ReportOutcome> refusal = RefuseForeignLocked(node, state, report)) {
        metrics_.reports_rejected().Increment();
        SendReportAckLocked(state, report.seq(), v1::REPORT_REJECTED, refusal->reason,
                            refusal->message);
        return;
      }
    }
    const ReportScheduler::Admission admission = reports_.Admit(
        node, net::ObjectKey(report.ref()), std::make_shared<const v1::StatusReport>(report));
    switch (admission) {
      case ReportScheduler::Admission::kQueued: break;
      case ReportScheduler::Admission::kDuplicate:
        // A resend (after a reconnect) of a report still held: its ACK will come.
        metrics_.reports_deduplicated().Increment();
        return;
      default: RefuseReportLocked(state, report.seq(), admission); return;
    }
    metrics_.reports_held().Set(static_cast<double>(reports_.held()));
    dispatch = TakeReportsLocked(to_pump);
  }
  for (auto& other : to_pump) other->Pump();
  DispatchReports(std::move(dispatch));
}

std::optional<ReportOutcome> EdgeHub::RefuseForeignLocked(const std::string& node,
                                                          const NodeState& state,
                                                          const v1::StatusReport& report) {
  const std::string key = net::ObjectKey(report.ref());
  auto it = state.desired.find(key);
  std::optional<ReportOutcome> refusal = RefuseForeignReport(
      node, it != state.desired.end() ? &it->second->ref() : nullptr, owners_.contains(key),
      report);
  if (refusal.has_value() && refusal->reason == kNotThisNode) {
    metrics_.foreign_reports().Increment();
    LOG(WARNING) << "edge hub: node " << node << " reported about " << net::RefString(report.ref())
                 << ", which is another node's object; refused";
  }
  return refusal;
}

void EdgeHub::RefuseReportLocked(NodeState& state, uint64_t seq,
                                 ReportScheduler::Admission admission) {
  metrics_.reports_retry().Increment();
  std::string_view message;
  switch (admission) {
    case ReportScheduler::Admission::kNodeFull:
      metrics_.reports_refused_node().Increment();
      message = "too many reports of this node in progress";
      break;
    case ReportScheduler::Admission::kOverShare:
      metrics_.reports_refused_share().Increment();
      message = "this node holds its share of the GM's reports in progress";
      break;
    default:
      metrics_.reports_refused_total().Increment();
      message = "the GM holds as many reports as it may";
      break;
  }
  SendReportAckLocked(state, seq, v1::REPORT_RETRY, "Busy", message, RetryAfterLocked());
}

absl::Duration EdgeHub::RetryAfterLocked() {
  const RecentRate::Recent finished = reports_finished_.Get();
  if (finished.events == 0) return absl::ZeroDuration();
  const absl::Duration drain =
      finished.span * static_cast<int64_t>(reports_.held()) / static_cast<int64_t>(finished.events);
  return std::clamp(drain, absl::Seconds(1), absl::Minutes(5));
}

std::vector<EdgeHub::Dispatch> EdgeHub::TakeReportsLocked(
    std::vector<std::shared_ptr<Session>>& to_pump) {
  std::vector<Dispatch> dispatch;
  if (!synced_) return dispatch;
  while (std::optional<Dispatch> next = reports_.Next()) {
    // The object may have gone from the node while the report waited.
    std::optional<ReportOutcome> refusal =
        RefuseForeignLocked(next->node, nodes_[next->node], *next->report);
    if (!refusal.has_value()) {
      dispatch.push_back(*std::move(next));
      continue;
    }
    AnswerReportsLocked(next->node, next->key, next->report->seq(), *refusal);
    if (const auto& session = nodes_[next->node].session) to_pump.push_back(session);
  }
  return dispatch;
}

void EdgeHub::SendReportAckLocked(NodeState& state, uint64_t seq, v1::ReportResult result,
                                  std::string_view reason, std::string_view message,
                                  absl::Duration retry_after) {
  // Goes to whatever stream the node has now; with none, the node resends after reconnecting.
  if (state.session == nullptr || !state.session->established()) return;
  v1::SyncResponse response;
  v1::ReportAck* ack = response.mutable_report_ack();
  ack->set_seq(seq);
  ack->set_result(result);
  ack->set_reason(std::string(reason));
  ack->set_message(std::string(message));
  if (retry_after > absl::ZeroDuration()) {
    ack->set_retry_after_ms(static_cast<uint32_t>(absl::ToInt64Milliseconds(retry_after)));
  }
  state.session->EnqueueControl(std::move(response));
}

void EdgeHub::DispatchReports(std::vector<Dispatch> dispatch) {
  if (t_dispatch.hub == this) {
    for (Dispatch& d : dispatch) t_dispatch.pending->push_back(std::move(d));
    return;
  }
  const DispatchInProgress outer = t_dispatch;
  t_dispatch = {this, &dispatch};
  // By index: synchronous completions append to `dispatch` while it is walked.
  for (std::size_t i = 0; i < dispatch.size(); ++i) {
    Dispatch d = std::move(dispatch[i]);
    const uint64_t seq = d.report->seq();
    if (options_.report_handler == nullptr) {
      CompleteReport(d.node, d.key, seq,
                     ReportOutcome::Retry("NoHandler", "the GM has no handler for reports yet"));
      continue;
    }
    auto called = std::make_shared<std::atomic<bool>>(false);
    std::weak_ptr<Liveness> liveness = liveness_;
    ReportCompletion done = [liveness, called, node = d.node, key = d.key,
                             seq](ReportOutcome outcome) {
      if (called->exchange(true)) {
        LOG(ERROR) << "edge hub: report " << seq << " of node " << node
                   << " completed twice; ignored";
        return;
      }
      std::shared_ptr<Liveness> alive = liveness.lock();
      if (alive == nullptr) return;
      EdgeHub* hub;
      {
        absl::MutexLock lock(&alive->mu);
        hub = alive->hub;
        if (hub == nullptr) return;
        ++alive->running;
      }
      // No lock held: the handler may complete synchronously inside the next dispatch.
      hub->CompleteReport(node, key, seq, std::move(outcome));
      absl::MutexLock lock(&alive->mu);
      --alive->running;
    };
    options_.report_handler->HandleReport(d.node, std::move(d.report), std::move(done));
  }
  t_dispatch = outer;
}

void EdgeHub::CompleteReport(const std::string& node, const std::string& key, uint64_t seq,
                             ReportOutcome outcome) {
  std::vector<Dispatch> next;
  std::vector<std::shared_ptr<Session>> to_pump;
  {
    absl::MutexLock lock(&mu_);
    if (!AnswerReportsLocked(node, key, seq, outcome)) {
      LOG(ERROR) << "edge hub: completion for report " << seq << " of node " << node
                 << " that is not in progress; ignored";
      return;
    }
    if (const auto& session = nodes_[node].session) to_pump.push_back(session);
    // The freed place goes to whichever node's turn it is.
    next = TakeReportsLocked(to_pump);
  }
  for (auto& session : to_pump) session->Pump();
  DispatchReports(std::move(next));
}

bool EdgeHub::AnswerReportsLocked(const std::string& node, const std::string& key, uint64_t seq,
                                  const ReportOutcome& outcome) {
  std::optional<std::vector<uint64_t>> answered = reports_.Complete(node, key, seq);
  if (!answered.has_value()) return false;
  reports_finished_.Add(answered->size());
  metrics_.reports_held().Set(static_cast<double>(reports_.held()));
  metrics_.reports_coalesced().Increment(static_cast<double>(answered->size() - 1));
  v1::ReportResult result = v1::REPORT_ACCEPTED;
  prometheus::Counter* counter = &metrics_.reports_accepted();
  switch (outcome.code) {
    case ReportOutcome::Code::kAccepted: break;
    case ReportOutcome::Code::kRejected:
      result = v1::REPORT_REJECTED;
      counter = &metrics_.reports_rejected();
      break;
    case ReportOutcome::Code::kRetry:
      result = v1::REPORT_RETRY;
      counter = &metrics_.reports_retry();
      break;
  }
  if (result != v1::REPORT_ACCEPTED) {
    LOG(INFO) << "edge hub: node " << node << " report " << seq << " about " << key << ": "
              << ResultName(result) << " (" << outcome.reason << ": " << outcome.message << ")";
  }
  NodeState& state = nodes_[node];
  // Reports coalesced into this one get its answer: it carried their (older) state too.
  for (uint64_t answered_seq : *answered) {
    counter->Increment();
    SendReportAckLocked(state, answered_seq, result, outcome.reason, outcome.message);
  }
  return true;
}

}  // namespace nereid::gm
