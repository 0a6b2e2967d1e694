#include "bench/edge_shards_phases.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "bench/bench_setup.h"
#include "common/status/macros.h"

namespace nereid::bench {

absl::Status AwaitShardReplicas(const ShardReplicas& gms, int replicas) {
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (true) {
    bool all = true;
    for (int port : {gms.leader_http_port, gms.standby_http_port}) {
      absl::StatusOr<std::string> metrics = FetchMetrics(port);
      all = all && metrics.ok() &&
            MetricValue(*metrics, "nereid_gm_edge_shard_replicas") == replicas;
    }
    if (all) return absl::OkStatus();
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("the replicas did not see ", replicas, " edge shard replicas in 30 s"));
    }
    absl::SleepFor(absl::Milliseconds(100));
  }
}

absl::StatusOr<std::string> AwaitJoin(const ShardReplicas& gms, const EdgeSimulator& sim,
                                      int64_t resyncs_before, absl::Duration timeout) {
  std::vector<int> per_second;
  double moved = 0;
  double relayed = 0;
  int still = 0;
  const absl::Time deadline = absl::Now() + timeout;
  while (still < 3) {
    if (absl::Now() >= deadline) return absl::DeadlineExceededError("the join did not settle");
    absl::SleepFor(absl::Seconds(1));
    ASSIGN_OR_RETURN(std::string leader, FetchMetrics(gms.leader_http_port));
    ASSIGN_OR_RETURN(std::string standby, FetchMetrics(gms.standby_http_port));
    const double now_moved = MetricValue(leader, "nereid_gm_edge_nodes_moved_total");
    relayed = MetricValue(standby, "nereid_edgehub_relayed_streams");
    per_second.push_back(static_cast<int>(now_moved - moved));
    const bool settled = now_moved == moved && now_moved > 0 && relayed >= now_moved &&
                         sim.tally().resyncs_done.load() >= resyncs_before + now_moved;
    still = settled ? still + 1 : 0;
    moved = now_moved;
  }
  return absl::StrFormat(
      "the leader moved %.0f nodes to it in %zu s (per second: %s); the standby relays %.0f",
      moved, per_second.size() - 3, absl::StrJoin(per_second.begin(), per_second.end() - 3, " "),
      relayed);
}

std::string ShardSplit(const ShardReplicas& gms, const EdgeSimulator& sim) {
  absl::StatusOr<std::string> leader = FetchMetrics(gms.leader_http_port);
  absl::StatusOr<std::string> standby = FetchMetrics(gms.standby_http_port);
  if (!leader.ok() || !standby.ok()) return "";
  const double relayed = MetricValue(*standby, "nereid_edgehub_relayed_streams");
  const double connected = MetricValue(*leader, "nereid_edgehub_connected_nodes");
  return absl::StrFormat(
      "edge shards: the leader serves %.0f nodes directly, the standby relays %.0f; "
      "%lld owner trailers followed (the leader sent %.0f, the standby's relay %.0f)\n",
      connected - relayed, relayed, static_cast<long long>(sim.tally().redirects.load()),
      MetricValue(*leader, "nereid_edgehub_streams_redirected_total"),
      MetricValue(*standby, "nereid_edgehub_relay_redirects_total"));
}

}  // namespace nereid::bench
