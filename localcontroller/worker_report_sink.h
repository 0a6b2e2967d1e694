#pragma once

// The worker intake's ReportSink over the LC database: stamps the owner's uid/version when the node
// holds the owner (a report about an owner the node does not hold is still forwarded: the GM is the
// authority and answers REJECTED if it cannot place it) and enqueues, in one transaction.

#include "localcontroller/db/lc_database.h"
#include "localcontroller/worker/worker_intake.h"

namespace nereid::lc {

class WorkerReportSink final : public worker::ReportSink {
 public:
  explicit WorkerReportSink(db::LcDatabase* db) : db_(db) {}
  absl::Status Enqueue(edge::v1::StatusReport report) override;
  // worker_attribution.h over the node's desired objects.
  absl::StatusOr<worker::ReportOwner> AttributeWorker(std::string_view ns, std::string_view worker,
                                                      std::string_view owner_name) override;

 private:
  db::LcDatabase* const db_;
};

}  // namespace nereid::lc
