#include "localcontroller/worker_report_sink.h"

#include "localcontroller/report_writer.h"
#include "localcontroller/worker_attribution.h"

namespace nereid::lc {

absl::Status WorkerReportSink::Enqueue(edge::v1::StatusReport report) {
  return db_->Write([&](db::LcDatabase::Tables& tables) -> absl::Status {
    if (absl::Status stamped = StampFromDesired(tables, report);
        !stamped.ok() && !absl::IsNotFound(stamped)) {
      return stamped;
    }
    return EnqueueInTransaction(tables, report);
  });
}

absl::StatusOr<worker::ReportOwner> WorkerReportSink::AttributeWorker(std::string_view ns,
                                                                      std::string_view worker,
                                                                      std::string_view owner_name) {
  absl::StatusOr<worker::ReportOwner> owner = absl::NotFoundError("");
  absl::Status read = db_->Read([&](db::LcDatabase::Tables& tables) -> absl::Status {
    owner = lc::AttributeWorker(tables, ns, worker, owner_name);
    return absl::OkStatus();
  });
  if (!read.ok()) return read;
  return owner;
}

}  // namespace nereid::lc
