#pragma once

// How every report producer of the daemon (dataset scanner, model keeper, worker REST) puts a
// report into the outbox: inside one database transaction, the report is stamped with the uid and
// version of the object as the node holds it (so the GM can tell a stale report about a re-created
// object), then enqueued under its key (latest state per object / report type / sub key wins).

#include "absl/status/status.h"
#include "localcontroller/db/lc_database.h"
#include "nereid/edge/v1/status.pb.h"

namespace nereid::lc {

// Within a Write(): fills report.ref.uid and observed_version from the desired object. NotFound
// when the node does not hold the object.
absl::Status StampFromDesired(db::LcDatabase::Tables& tables, edge::v1::StatusReport& report);
// Within a Write(): encodes and enqueues.
absl::Status EnqueueInTransaction(db::LcDatabase::Tables& tables,
                                  const edge::v1::StatusReport& report);

}  // namespace nereid::lc
