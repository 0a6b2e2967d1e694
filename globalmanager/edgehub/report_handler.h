#pragma once

// The upstream seam of the edge hub: the hub hands each admitted StatusReport to a ReportHandler
// (the GM's controllers), which writes it to the Kubernetes API on its own threads and then calls
// the completion. Only then does the hub send the node a ReportAck, so a report leaves the LC's
// outbox only after it reached the API.

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "nereid/edge/v1/status.pb.h"

namespace nereid::gm {

struct ReportOutcome {
  enum class Code {
    kAccepted,  // written to the Kubernetes API: the LC drops the report
    kRejected,  // can never be written (object gone, invalid): the LC drops the report
    kRetry,     // not written now (API unavailable, conflict storm): the LC keeps it, resends later
  };
  Code code = Code::kAccepted;
  std::string reason;   // machine-readable, e.g. ObjectGone, Invalid, ApiError
  std::string message;  // human-readable detail

  static ReportOutcome Accepted() { return {}; }
  static ReportOutcome Rejected(std::string reason, std::string message) {
    return {Code::kRejected, std::move(reason), std::move(message)};
  }
  static ReportOutcome Retry(std::string reason, std::string message) {
    return {Code::kRetry, std::move(reason), std::move(message)};
  }
};

// Called exactly once per report, from any thread (also synchronously from HandleReport).
using ReportCompletion = std::function<void(ReportOutcome)>;

class ReportHandler {
 public:
  virtual ~ReportHandler() = default;

  // `node` is the authenticated node; the hub has already checked that the report is about an
  // object the hub currently sends to that node. Must not block (it runs on gRPC threads): queue
  // the work and complete later. Reports about the same object arrive one at a time, in seq order.
  virtual void HandleReport(std::string_view node,
                            std::shared_ptr<const edge::v1::StatusReport> report,
                            ReportCompletion done) = 0;
};

}  // namespace nereid::gm
