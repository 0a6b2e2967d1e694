#pragma once

// One simulated edge node: what a LocalController does on the wire, without a database, a dataset
// monitor or a thread of its own. It dials the GM over mTLS with its own certificate (one channel
// per node: the GM takes the node name from the client certificate), sends a Hello with the
// inventory it holds (empty at first), ACKs every Change at once and records when it arrived, and
// sends the Dataset StatusReports it is asked for with at most `max_reports_in_flight` unanswered,
// resending RETRY answers after a delay and in-flight reports after a reconnect, as the LC does.
// A stream that ends while the node is not stopping is redialed with the LC's backoff (1 s x1.6 up
// to 120 s, +-20 % jitter), reset by a completed resync, so a reconnect storm spreads as the LCs'
// does.
//
// Threading: gRPC reactions (via NodeStream), the DelayedRunner and the caller's thread; state is
// under mu_, and no lock is held while sending (NodeStream::Send may call into gRPC).

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "bench/edge_simulator/delayed_runner.h"
#include "bench/edge_simulator/node_certs.h"
#include "bench/edge_simulator/node_stream.h"
#include "common/net/edge_pacing.h"
#include "common/net/keepalive.h"
#include "common/time/backoff.h"
#include "grpcpp/channel.h"
#include "nereid/edge/v1/sync.grpc.pb.h"

namespace nereid::bench {

// Counters shared by every node of a simulator (lock-free, read by the waiting thread).
struct SimTally {
  std::atomic<int64_t> streams_opened{0};
  std::atomic<int64_t> streams_established{0};  // HelloReply received
  std::atomic<int64_t> resyncs_done{0};         // ResyncDone received
  std::atomic<int64_t> streams_ended{0};        // ended while the node was not stopping
  std::atomic<int64_t> streams_live{0};         // opened and not yet ended
  std::atomic<int64_t> upserts{0};
  std::atomic<int64_t> removes{0};
  std::atomic<int64_t> repeated_upserts{0};  // an upsert of a version the node already held
  std::atomic<int64_t> reports_queued{0};
  std::atomic<int64_t> reports_sent{0};  // sends, resends included
  std::atomic<int64_t> reports_accepted{0};
  std::atomic<int64_t> reports_rejected{0};
  std::atomic<int64_t> reports_retry{0};  // RETRY answers (each is resent later)
  std::atomic<int64_t> reports_retry_estimated{0};  // of those, with the GM's retry_after
  std::atomic<int64_t> resend_rounds{0};
  std::atomic<int64_t> unexpected_messages{0};
  std::atomic<int64_t> redirects{0};  // owner trailers followed, as the LC follows them
};

// A Change as it reached the node (and was ACKed at that moment).
struct Arrival {
  std::string node;
  std::string key;  // Kind/namespace/name
  std::string version;
  bool removed = false;
  absl::Time at;
};

// One StatusReport from first send to its final answer (ACCEPTED or REJECTED).
struct ReportRecord {
  std::string node;
  std::string key;  // Kind/namespace/name
  uint64_t seq = 0;
  int attempts = 0;
  absl::Time first_sent = absl::InfinitePast();
  absl::Time answered = absl::InfinitePast();  // InfinitePast while unanswered
  edge::v1::ReportResult result = edge::v1::REPORT_RESULT_UNSPECIFIED;
  std::string reason;
};

class SimNode final : public NodeStream::Listener {
 public:
  struct Options {
    std::string gm_address;  // host:port
    std::string ca_pem;      // trusted for the GM's server certificate
    NodeIdentity identity;
    net::KeepaliveOptions keepalive;
    int max_reports_in_flight = 64;  // as the LC's cloud link
    // As the LC's cloud link: after a RETRY, one resend round of every report answered RETRY
    // until then, at a random point in the second half of the GM's estimate when it gave one
    // and `honor_retry_after`, else after this backoff, reset by an ACCEPTED.
    ExponentialBackoff::Options report_retry = net::kEdgeReportRetryBackoff;
    bool honor_retry_after = true;
    ExponentialBackoff::Options reconnect_backoff = net::kEdgeReconnectBackoff;
    std::string lc_version = "nereid-edge-simulator";
  };
  // number_of_samples to report for a Dataset (node, key).
  using SampleCount = std::function<int64_t(const std::string& node, const std::string& key)>;

  SimNode(Options options, SimTally* tally, DelayedRunner* runner);
  ~SimNode() override;
  SimNode(const SimNode&) = delete;
  SimNode& operator=(const SimNode&) = delete;

  const std::string& name() const { return options_.identity.node; }

  // Opens the stream (Hello with what the node holds).
  void Connect();
  // No more reconnects; cancels the stream. OnEnded follows on a gRPC thread.
  void Stop();
  bool live() const;
  // Whether its stream goes to an owner address it was sent to, not the configured one.
  bool redirected() const;

  // Queues one report per Dataset the node holds; returns how many.
  std::size_t QueueDatasetReports(const SampleCount& samples);

  std::vector<Arrival> arrivals() const;
  std::vector<ReportRecord> reports() const;
  std::size_t held() const;
  // "status code: message" of the last stream that ended while not stopping ("" if none).
  std::string last_error() const;

  // NodeStream::Listener
  void OnMessage(NodeStream* stream, const edge::v1::SyncResponse& message) override;
  void OnEnded(NodeStream* stream, const grpc::Status& status, const std::string& owner) override;

 private:
  struct Held {
    edge::v1::ObjectRef ref;
    std::string version;
  };
  struct Report {
    ReportRecord record;
    edge::v1::StatusReport message;
    bool in_flight = false;
  };

  // Moves waiting reports into `out` while the window has room.
  void TakeReportsLocked(std::vector<edge::v1::SyncRequest>* out)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void HandleChangeLocked(const edge::v1::Change& change, absl::Time at,
                          std::vector<edge::v1::SyncRequest>* out)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void HandleReportAckLocked(const edge::v1::ReportAck& ack, absl::Time at)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Resends every report of the resend round still unanswered.
  void ResendRound();
  // Sends on the current stream (no lock held).
  void SendAll(const std::shared_ptr<NodeStream>& stream, std::vector<edge::v1::SyncRequest> out);

  const Options options_;
  SimTally* const tally_;
  DelayedRunner* const runner_;
  // A stub on a channel of its own to `address` (one TCP+TLS connection per node).
  std::shared_ptr<edge::v1::EdgeSync::Stub> NewStub(const std::string& address) const;

  mutable absl::Mutex mu_;
  std::shared_ptr<edge::v1::EdgeSync::Stub> stub_ ABSL_GUARDED_BY(mu_);
  std::string dialed_ ABSL_GUARDED_BY(mu_);  // the owner stub_ dials; "" = options_.gm_address
  std::shared_ptr<NodeStream> stream_ ABSL_GUARDED_BY(mu_);
  bool established_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::string last_error_ ABSL_GUARDED_BY(mu_);
  ExponentialBackoff reconnect_backoff_ ABSL_GUARDED_BY(mu_);
  ExponentialBackoff report_backoff_ ABSL_GUARDED_BY(mu_);
  std::vector<uint64_t> resend_round_ ABSL_GUARDED_BY(mu_);  // answered RETRY, resent together
  std::map<std::string, Held> held_ ABSL_GUARDED_BY(mu_);
  std::vector<Arrival> arrivals_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, Report> reports_ ABSL_GUARDED_BY(mu_);
  std::deque<uint64_t> to_send_ ABSL_GUARDED_BY(mu_);
  int in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t next_seq_ ABSL_GUARDED_BY(mu_) = 1;
};

}  // namespace nereid::bench
