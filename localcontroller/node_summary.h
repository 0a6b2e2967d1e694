#pragma once

// The node's summary for the GM (sync.proto NodeSummary), read from the same view the operator
// API answers from, so `kubectl get en` and the node's own /api/v1/status agree.

#include "absl/status/statusor.h"
#include "localcontroller/db/lc_database.h"
#include "localcontroller/server/state_view.h"
#include "nereid/edge/v1/sync.pb.h"

namespace nereid::lc {

absl::StatusOr<edge::v1::NodeSummary> ReadNodeSummary(server::StateView& view,
                                                      const db::LcDatabase::WriteHealth& db);

}  // namespace nereid::lc
