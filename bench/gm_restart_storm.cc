#include "bench/gm_restart_storm.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status/macros.h"
#include "httplib.h"

namespace nereid::bench {
namespace {

absl::Status ResetApiRequestCounts(int api_port) {
  httplib::Client http("127.0.0.1", api_port);
  http.set_read_timeout(10);
  httplib::Result result = http.Delete("/debug/requests");
  if (!result || result->status != 200) {
    return absl::UnavailableError("DELETE /debug/requests of devapiserver failed");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<RestartStorm> RestartGmAndAwaitResync(std::unique_ptr<testing::Subprocess>& gm,
                                                     testing::Subprocess::Options options,
                                                     int edge_port, int api_port,
                                                     const EdgeSimulator& sim, int64_t nodes,
                                                     absl::Duration timeout) {
  auto listen = std::find(options.argv.begin(), options.argv.end(), "--listen");
  if (listen == options.argv.end() || std::next(listen) == options.argv.end()) {
    return absl::InvalidArgumentError("the GM's argv has no --listen");
  }
  *std::next(listen) = absl::StrCat("127.0.0.1:", edge_port);

  RestartStorm storm;
  const int64_t resynced_before = sim.tally().resyncs_done.load();
  const int64_t opened_before = sim.tally().streams_opened.load();
  const int64_t established_before = sim.tally().streams_established.load();
  const absl::Time stop_start = absl::Now();
  ASSIGN_OR_RETURN(storm.gm_exit, gm->Stop(absl::Seconds(60)));
  storm.stop_seconds = absl::ToDoubleSeconds(absl::Now() - stop_start);

  RETURN_IF_ERROR(ResetApiRequestCounts(api_port));
  const absl::Time start = absl::Now();
  ASSIGN_OR_RETURN(GlobalManager started, StartGlobalManager(std::move(options)));
  gm = std::move(started.process);
  storm.http_port = started.http_port;
  const absl::Time ready = absl::Now();
  storm.ready_seconds = absl::ToDoubleSeconds(ready - start);
  if (started.edge_port != edge_port) {
    return absl::InternalError(absl::StrCat("the new GM listens on ", started.edge_port,
                                            ", the nodes dial ", edge_port));
  }

  // Sampled, not event-driven: the simulator's tally is a set of counters.
  int64_t last = sim.tally().resyncs_done.load() - resynced_before;
  absl::Time second_end = ready + absl::Seconds(1);
  int64_t at_second_start = 0;
  while (last < nodes) {
    if (absl::Now() - ready > timeout) {
      return absl::DeadlineExceededError(
          absl::StrCat("only ", last, " of ", nodes, " nodes resynced after the restart"));
    }
    absl::SleepFor(absl::Milliseconds(20));
    last = sim.tally().resyncs_done.load() - resynced_before;
    const absl::Time now = absl::Now();
    while (now >= second_end) {
      storm.per_second.push_back(last - at_second_start);
      at_second_start = last;
      second_end += absl::Seconds(1);
    }
    if (last >= nodes) storm.resync_seconds = absl::ToDoubleSeconds(now - ready);
  }
  storm.per_second.push_back(last - at_second_start);
  storm.streams_opened = sim.tally().streams_opened.load() - opened_before;
  storm.streams_established = sim.tally().streams_established.load() - established_before;
  ASSIGN_OR_RETURN(storm.gm_requests, FetchApiRequestCounts(api_port, kGmUserAgent));
  ASSIGN_OR_RETURN(std::string metrics, FetchMetrics(storm.http_port));
  storm.connections_accepted = MetricValue(metrics, "nereid_edgehub_connections_accepted_total");
  storm.refused_peer_gone = MetricValue(metrics, "nereid_edgehub_connections_refused_total",
                                        {"reason=\"peer_gone\""});
  storm.refused_waited = MetricValue(metrics, "nereid_edgehub_connections_refused_total",
                                     {"reason=\"waited\""});
  storm.refused_crowded = MetricValue(metrics, "nereid_edgehub_connections_refused_total",
                                      {"reason=\"crowded\""});
  return storm;
}

}  // namespace nereid::bench
