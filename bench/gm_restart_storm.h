#pragma once

// The reconnect storm after a GM restart, for edge_fanout_bench --restart: the GM is stopped
// (SIGTERM, as a rollout does) with every simulated node connected, started again on the same edge
// port, and the bench waits until every node has resynced. Measured: how long the GM took to stop
// and to become ready, when the last node resynced, how many nodes resynced in each second (the
// connection-rate curve), and every API request the new GM made meanwhile (devapiserver counts
// them), which must not grow with the node count (no per-node read).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "bench/bench_setup.h"
#include "bench/edge_simulator/edge_simulator.h"
#include "tests/support/subprocess.h"

namespace nereid::bench {

struct RestartStorm {
  int gm_exit = -1;                 // the old GM's
  int http_port = 0;                // the new GM's
  double stop_seconds = 0;          // SIGTERM -> the old GM exited
  double ready_seconds = 0;         // new GM started -> /readyz 200
  double resync_seconds = 0;        // new GM ready -> the last node's ResyncDone
  std::vector<int64_t> per_second;  // resyncs in each second after the new GM was ready
  ApiRequestCounts gm_requests;     // the new GM's, from its start to the last resync
  // From the old GM's stop to the last resync: the nodes' attempts to open a stream, and those
  // that got a HelloReply.
  int64_t streams_opened = 0;
  int64_t streams_established = 0;
  // The new GM's edge port (its /metrics): connections accepted, and closed before their
  // handshake because the node had hung up, the connection waited too long or newer ones
  // crowded it out of a full line.
  double connections_accepted = 0;
  double refused_peer_gone = 0;
  double refused_waited = 0;
  double refused_crowded = 0;
};

// Restarts `gm` (replaced by the new process; `options` is how it was started, with its
// "--listen 127.0.0.1:0" set to `edge_port` for the new one) and waits up to `timeout` until
// `sim`'s resyncs_done grew by `nodes`.
absl::StatusOr<RestartStorm> RestartGmAndAwaitResync(std::unique_ptr<testing::Subprocess>& gm,
                                                     testing::Subprocess::Options options,
                                                     int edge_port, int api_port,
                                                     const EdgeSimulator& sim, int64_t nodes,
                                                     absl::Duration timeout);

}  // namespace nereid::bench
