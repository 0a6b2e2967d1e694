#pragma once

// The edge-shards parts of edge_fanout_bench (--shards, --shards-join): two GM replicas with
// --edge-shards, read through their /metrics. The leader is the replica the nodes dial; the
// standby serves (relays) the nodes hashed to it.

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "bench/edge_simulator/edge_simulator.h"

namespace nereid::bench {

struct ShardReplicas {
  int leader_http_port = 0;
  int standby_http_port = 0;
};

// Until both replicas count `replicas` live shard replicas (at most 30 s).
absl::Status AwaitShardReplicas(const ShardReplicas& gms, int replicas);

// After the standby started: until the leader's moves to it have stopped for 3 s and every moved
// node has resynced (the simulator's resyncs_done grew by the moves since `resyncs_before`), at
// most `timeout`. Returns one line: the moves in each second and the standby's relayed streams.
absl::StatusOr<std::string> AwaitJoin(const ShardReplicas& gms, const EdgeSimulator& sim,
                                      int64_t resyncs_before, absl::Duration timeout);

// One line: the nodes the leader serves directly and the standby relays, and the owner trailers
// the simulator followed ("" when a /metrics cannot be read).
std::string ShardSplit(const ShardReplicas& gms, const EdgeSimulator& sim);

}  // namespace nereid::bench
