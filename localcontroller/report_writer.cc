#include "localcontroller/report_writer.h"

#include "common/status/macros.h"
#include "localcontroller/cloudlink/lc_db_adapter.h"

namespace nereid::lc {

absl::Status StampFromDesired(db::LcDatabase::Tables& tables, edge::v1::StatusReport& report) {
  ASSIGN_OR_RETURN(db::DesiredObject object, tables.desired.Get(ToDbRef(report.ref())));
  report.mutable_ref()->set_uid(object.ref.uid);
  report.set_observed_version(object.version);
  return absl::OkStatus();
}

absl::Status EnqueueInTransaction(db::LcDatabase::Tables& tables,
                                  const edge::v1::StatusReport& report) {
  ASSIGN_OR_RETURN(EncodedReport encoded, EncodeReport(report));
  return tables.outbox.Enqueue(encoded.key, encoded.observed_version, encoded.payload).status();
}

}  // namespace nereid::lc
