#include "bench/edge_simulator/edge_simulator.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/log/log.h"

namespace nereid::bench {

absl::StatusOr<std::unique_ptr<EdgeSimulator>> EdgeSimulator::Create(
    Options options, std::vector<NodeIdentity> nodes) {
  if (options.gm_address.empty()) return absl::InvalidArgumentError("no GM address");
  if (options.ca_pem.empty()) return absl::InvalidArgumentError("no CA certificate");
  if (nodes.empty()) return absl::InvalidArgumentError("no nodes");
  std::unique_ptr<EdgeSimulator> sim(new EdgeSimulator());
  sim->nodes_.reserve(nodes.size());
  for (NodeIdentity& identity : nodes) {
    SimNode::Options node;
    const bool second = !options.second_address.empty() && sim->nodes_.size() % 2 == 1;
    node.gm_address = second ? options.second_address : options.gm_address;
    node.ca_pem = options.ca_pem;
    node.identity = std::move(identity);
    node.keepalive = options.keepalive;
    node.max_reports_in_flight = options.max_reports_in_flight;
    node.report_retry = options.report_retry;
    node.honor_retry_after = options.honor_retry_after;
    node.reconnect_backoff = options.reconnect_backoff;
    sim->nodes_.push_back(std::make_unique<SimNode>(std::move(node), &sim->tally_, &sim->runner_));
  }
  return sim;
}

EdgeSimulator::~EdgeSimulator() { Stop(); }

void EdgeSimulator::Connect() {
  for (auto& node : nodes_) node->Connect();
}

bool EdgeSimulator::WaitFor(const std::function<bool(const SimTally&)>& done,
                            absl::Duration timeout) const {
  const absl::Time deadline = absl::Now() + timeout;
  while (!done(tally_)) {
    if (absl::Now() >= deadline) return false;
    absl::SleepFor(absl::Milliseconds(5));
  }
  return true;
}

std::size_t EdgeSimulator::QueueDatasetReports(const SimNode::SampleCount& samples) {
  std::size_t queued = 0;
  for (auto& node : nodes_) queued += node->QueueDatasetReports(samples);
  return queued;
}

std::vector<Arrival> EdgeSimulator::Arrivals() const {
  std::vector<Arrival> all;
  for (const auto& node : nodes_) {
    std::vector<Arrival> some = node->arrivals();
    all.insert(all.end(), std::make_move_iterator(some.begin()),
               std::make_move_iterator(some.end()));
  }
  return all;
}

std::vector<ReportRecord> EdgeSimulator::Reports() const {
  std::vector<ReportRecord> all;
  for (const auto& node : nodes_) {
    std::vector<ReportRecord> some = node->reports();
    all.insert(all.end(), std::make_move_iterator(some.begin()),
               std::make_move_iterator(some.end()));
  }
  return all;
}

std::vector<bool> EdgeSimulator::Redirected() const {
  std::vector<bool> redirected;
  redirected.reserve(nodes_.size());
  for (const auto& node : nodes_) redirected.push_back(node->redirected());
  return redirected;
}

std::vector<std::size_t> EdgeSimulator::Held() const {
  std::vector<std::size_t> held;
  held.reserve(nodes_.size());
  for (const auto& node : nodes_) held.push_back(node->held());
  return held;
}

std::vector<std::string> EdgeSimulator::StreamErrors() const {
  std::vector<std::string> errors;
  for (const auto& node : nodes_) {
    std::string error = node->last_error();
    if (!error.empty()) errors.push_back(absl::StrCat(node->name(), ": ", error));
  }
  return errors;
}

void EdgeSimulator::Stop() {
  if (stopped_) return;
  stopped_ = true;
  // No resend or reconnect may start once the streams are being cancelled.
  runner_.Stop();
  for (auto& node : nodes_) node->Stop();
  if (!WaitFor([](const SimTally& t) { return t.streams_live.load() <= 0; }, absl::Seconds(30))) {
    // A reaction still to come would touch a destroyed node: keep the nodes alive instead.
    LOG(ERROR) << "edge simulator: " << tally_.streams_live.load()
               << " streams did not end within 30 s; leaking their nodes";
    for (auto& node : nodes_) {
      SimNode* leaked = node.release();
      (void)leaked;
    }
  }
}

}  // namespace nereid::bench
