#pragma once

// EdgeSimulator: N simulated edge nodes (sim_node.h) in one process, each with its own mTLS
// identity and channel, all served by gRPC's callback threads plus one DelayedRunner thread — no
// thread per node, unlike N LocalControllers or N CloudLinks.
//
//   auto sim = EdgeSimulator::Create(options, identities);   // one NodeIdentity per node
//   (*sim)->Connect();
//   (*sim)->WaitFor([&](const SimTally& t) { return t.resyncs_done >= n; }, absl::Seconds(60));
//   ... create objects through the API; every Change is ACKed and its arrival recorded ...
//   (*sim)->QueueDatasetReports(samples);                     // one report per held Dataset
//   (*sim)->Arrivals(); (*sim)->Reports();                     // per-object times
//   (*sim)->Stop();

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "bench/edge_simulator/delayed_runner.h"
#include "bench/edge_simulator/node_certs.h"
#include "bench/edge_simulator/sim_node.h"
#include "common/net/edge_pacing.h"
#include "common/net/keepalive.h"
#include "common/time/backoff.h"

namespace nereid::bench {

class EdgeSimulator {
 public:
  struct Options {
    std::string gm_address;  // host:port of the GM's edge hub
    // When set, every other node dials this address instead (two replicas behind one Service).
    std::string second_address;
    std::string ca_pem;      // the CA that signed the GM's server certificate
    net::KeepaliveOptions keepalive;
    int max_reports_in_flight = 64;
    // The LC's (localcontroller/cloudlink/cloud_link.h); see SimNode::Options.
    ExponentialBackoff::Options report_retry = net::kEdgeReportRetryBackoff;
    bool honor_retry_after = true;
    ExponentialBackoff::Options reconnect_backoff = net::kEdgeReconnectBackoff;
  };

  static absl::StatusOr<std::unique_ptr<EdgeSimulator>> Create(Options options,
                                                               std::vector<NodeIdentity> nodes);
  ~EdgeSimulator();  // Stop()
  EdgeSimulator(const EdgeSimulator&) = delete;
  EdgeSimulator& operator=(const EdgeSimulator&) = delete;

  // Opens every node's stream at once (a connection storm, as after a GM restart).
  void Connect();
  // Polls `done` on the tally every few milliseconds until it holds (true) or `timeout` passes.
  bool WaitFor(const std::function<bool(const SimTally&)>& done, absl::Duration timeout) const;
  const SimTally& tally() const { return tally_; }

  // Every node reports each Dataset it holds; returns how many reports were queued.
  std::size_t QueueDatasetReports(const SimNode::SampleCount& samples);

  std::size_t size() const { return nodes_.size(); }
  std::vector<Arrival> Arrivals() const;
  std::vector<ReportRecord> Reports() const;
  // Objects held per node, in node order.
  std::vector<std::size_t> Held() const;
  // Per node (in node order): whether it is served at an owner address it was sent to rather
  // than at the configured one.
  std::vector<bool> Redirected() const;
  // "node: code: message" for each node whose stream ended while not stopping (last error).
  std::vector<std::string> StreamErrors() const;

  // Cancels every stream and waits (bounded) until gRPC is done with them. Idempotent.
  void Stop();

 private:
  EdgeSimulator() = default;

  SimTally tally_;
  DelayedRunner runner_;
  std::vector<std::unique_ptr<SimNode>> nodes_;
  bool stopped_ = false;
};

}  // namespace nereid::bench
