#include "localcontroller/worker_report_sink.h"

#include "localcontroller/report_writer.h"

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

}  // namespace nereid::lc
