#pragma once

// Which object a worker report belongs to when the worker does not say its kind (the Sedna SDK's
// FederatedLearning reports ownerKind "default", its tracking classes "multiedgetrackingservice"):
// found among the objects the GM placed on this node, in the report's namespace, by
//   1. the worker itself: a Worker object named after it (multi-edge workers), whose job kind the
//      LC forwards, names its owner;
//   2. the report's ownerName (the SDK's JOB_NAME, which the GM sets for every kind): the one
//      object of a forwarded kind with that name.
// NotFound when neither finds exactly one owner (none held, or several kinds with that name).

#include <string_view>

#include "absl/status/statusor.h"
#include "localcontroller/db/lc_database.h"
#include "localcontroller/worker/worker_intake.h"

namespace nereid::lc {

// Within a Read() or Write().
absl::StatusOr<worker::ReportOwner> AttributeWorker(db::LcDatabase::Tables& tables,
                                                    std::string_view ns, std::string_view worker,
                                                    std::string_view owner_name);

}  // namespace nereid::lc
