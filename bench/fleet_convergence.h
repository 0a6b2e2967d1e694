#pragma once

// The fleet view's side of edge_fanout_bench (--edge-nodes on): after the nodes connect (or
// reconnect after a GM restart), how long until `kubectl get en` shows every one of them
// connected, and the API requests the GM made for it.

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "bench/bench_setup.h"
#include "common/kube/client.h"

namespace nereid::bench {

struct FleetConvergence {
  double seconds = 0;            // `since` -> every EdgeNode connected since then
  ApiRequestCounts gm_requests;  // the GM's, on edgenodes and nodes, minus `requests_before`
};

// Polls the EdgeNodes until `nodes` of them show status.connected with status.since at or after
// `since` (to the second); fails after `timeout`.
absl::StatusOr<FleetConvergence> AwaitFleetConnected(kube::KubeClient& client, int api_port,
                                                     int nodes, absl::Time since,
                                                     const ApiRequestCounts& requests_before,
                                                     absl::Duration timeout);

// "N requests (verb resource count, ...)" of the fleet's requests.
std::string DescribeRequests(const ApiRequestCounts& requests);

}  // namespace nereid::bench
