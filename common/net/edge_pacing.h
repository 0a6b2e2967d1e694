#pragma once

// How an edge node paces itself towards the GM: the LC's cloud link uses these, and the edge
// simulator (bench/) uses the same values so that the benchmarks' nodes behave as the LCs do.

#include "absl/time/time.h"
#include "common/time/backoff.h"

namespace nereid::net {

// Between attempts to (re)open the Sync stream: 1 s x1.6 up to 120 s, +-20 % (gRPC's connection
// backoff), so a reconnect storm after a GM restart spreads out.
inline constexpr ExponentialBackoff::Options kEdgeReconnectBackoff = {
    absl::Seconds(1), 1.6, absl::Seconds(120), 0.2};
// Before resending reports answered RETRY without an estimate (the GM could not write to the
// Kubernetes API): 5 s x2 up to 5 min, +-20 %, so nodes do not hammer an API server that is down.
inline constexpr ExponentialBackoff::Options kEdgeReportRetryBackoff = {
    absl::Seconds(5), 2.0, absl::Minutes(5), 0.2};

}  // namespace nereid::net
