#pragma once

// The LC's link to the GM (the edge dials the cloud): one Sync stream at a time over mutual TLS,
// re-established with gRPC-style backoff (1 s x1.6 up to 120 s, +-20 % jitter; reset once a stream
// stayed up for `healthy_after`), on the injected Clock.
//
// Per stream: Hello with the store's inventory -> the GM's difference and live changes, each
// validated, applied and committed to the DesiredStateStore and only then ACKed (NACKed with the
// reason when the spec is invalid) -> ResyncDone records the sync. Upstream, reports leave the
// ReportSource (the outbox) in seq order with at most `max_reports_in_flight` unanswered; after a
// reconnect everything still unacked is sent once more; a RETRY answer resends at a random point
// in the second half of the GM's estimate (ReportAck.retry_after_ms) when it gave one, else after
// the `report_retry` backoff.
//
// Threading: one link thread does all the work (database writes never run on gRPC threads);
// gRPC reactions only queue and wake it. status() may be called from any thread.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/net/edge_pacing.h"
#include "common/net/keepalive.h"
#include "common/net/tls.h"
#include "common/time/backoff.h"
#include "common/time/clock.h"
#include "localcontroller/cloudlink/desired_state_store.h"
#include "localcontroller/cloudlink/link_stream.h"
#include "localcontroller/cloudlink/report_source.h"
#include "localcontroller/cloudlink/summary_sender.h"

namespace nereid::lc {

struct CloudLinkOptions {
  std::string gm_address;  // --gm HOST:PORT (env GM_ADDRESS)
  std::string node_name;   // --node (env NODENAME); must match the client certificate
  net::TlsOptions tls;     // --tls-ca --tls-cert --tls-key, or --insecure
  net::KeepaliveOptions keepalive;
  // TLS name to verify on the GM certificate instead of the host part of gm_address.
  std::string server_name_override;
  std::string lc_version = "nereid-lc";  // the release
  std::string lc_commit;                 // the git commit
  // The node's summary for a GM that reads them (summary_sender.h); null: none sent.
  NodeSummarySource node_summary;
  // How often the summary is read to see whether it changed.
  absl::Duration summary_interval = absl::Seconds(2);

  ExponentialBackoff::Options backoff = net::kEdgeReconnectBackoff;
  // Source of jitter in [0, 1) (tests pin it); null = random.
  std::function<double()> jitter_source;
  // A stream that stayed established this long resets the backoff to its initial delay, so a GM
  // that accepts and drops streams at once still backs off.
  absl::Duration healthy_after = absl::Seconds(30);
  // No HelloReply within this → give up on the stream and back off.
  absl::Duration hello_timeout = absl::Seconds(30);
  // After a RETRY answer without an estimate (the GM could not write to the Kubernetes API):
  // resend what is unacked after this backoff, growing while RETRYs continue and reset by the next
  // ACCEPTED, so a cluster of nodes does not hammer an API server that is down.
  ExponentialBackoff::Options report_retry = net::kEdgeReportRetryBackoff;
  int max_reports_in_flight = 64;
  // Downstream messages buffered before the link stops reading (HTTP/2 flow control pushes back).
  int max_inbox = 64;
  Clock* clock = Clock::Real();
};

enum class LinkState { kIdle, kConnecting, kConnected, kBackoff, kStopped };
std::string_view LinkStateName(LinkState state);

// For the LC's status endpoint.
struct LinkStatus {
  LinkState state = LinkState::kIdle;
  bool synced = false;  // the current stream delivered the full difference (ResyncDone)
  absl::Time last_connected = absl::InfinitePast();  // last HelloReply
  absl::Time last_sync = absl::InfinitePast();       // last ResyncDone
  absl::Time last_error_at = absl::InfinitePast();
  std::string last_error;
  absl::Time next_attempt = absl::InfinitePast();        // while in kBackoff
  absl::Duration last_backoff;                           // the delay chosen for the current backoff
  absl::Time report_resend_at = absl::InfiniteFuture();  // after RETRY answers
  int attempts = 0;                                      // streams started
  std::string server;  // the address the current (or last) stream dialed
  // Streams refused by a GM replica that named the one serving this node, which was dialed next.
  int redirects = 0;
  int consecutive_failures = 0;                          // since the last healthy stream
  uint64_t changes_applied = 0;
  uint64_t changes_nacked = 0;
  uint64_t reports_sent = 0;
  uint64_t reports_acked = 0;
  uint64_t reports_rejected = 0;
  uint64_t reports_retried = 0;
};

class CloudLink {
 public:
  // Validates the options (address, node, TLS files and that the certificate names the node).
  // `store` and `reports` must outlive the link.
  static absl::StatusOr<std::unique_ptr<CloudLink>> Create(CloudLinkOptions options,
                                                           DesiredStateStore* store,
                                                           ReportSource* reports);
  ~CloudLink();
  CloudLink(const CloudLink&) = delete;
  CloudLink& operator=(const CloudLink&) = delete;

  void Start();
  // Cancels the stream and joins the link thread. Idempotent.
  void Stop();

  LinkStatus status() const;

 private:
  CloudLink(CloudLinkOptions options, std::shared_ptr<grpc::ChannelCredentials> credentials,
            DesiredStateStore* store, ReportSource* reports);

  void Run();
  // One stream from Hello to its end. Returns whether it was healthy (resets the backoff).
  bool RunStream();
  void HandleMessage(LinkStream& stream, const edge::v1::SyncResponse& message, bool* established,
                     absl::Time* established_at);
  void HandleChange(LinkStream& stream, const edge::v1::Change& change);
  void HandleReportAck(const edge::v1::ReportAck& ack);
  void SendReports(LinkStream& stream);
  // A channel to `address`, verified under the name the configured address is verified with.
  std::unique_ptr<edge::v1::EdgeSync::Stub> NewStub(const std::string& address);
  // The replica a refusing or moving GM named in `stream`'s trailer, if it is to be followed ("" if
  // not). `dialed`: the redirect this stream followed ("" for the configured address);
  // `established`: the GM served the stream before ending it.
  std::string RedirectFrom(const LinkStream& stream, const std::string& dialed, bool established);
  void Wake();
  void RecordError(const std::string& error);

  const CloudLinkOptions options_;
  const std::shared_ptr<grpc::ChannelCredentials> credentials_;
  DesiredStateStore* const store_;
  ReportSource* const reports_;
  Clock* const clock_;

  // Only the link thread touches these.
  ExponentialBackoff backoff_;
  ExponentialBackoff report_backoff_;
  absl::flat_hash_set<uint64_t> in_flight_;
  uint64_t send_cursor_ = 0;  // highest seq handed to the stream (rewound to resend)
  absl::Time resend_at_ = absl::InfiniteFuture();
  SummarySender summary_;
  // Where the next stream goes instead of options_.gm_address, for one attempt: the replica
  // serving this node, as a GM replica that refused the stream named it (no backoff before it).
  std::string redirect_;
  // The owner address dialled last that did not serve this node: told to the next replica
  // (net::kUnservedOwnerMetadata) so it serves the node instead of sending it there again.
  std::string unserved_owner_;
  // Set by a handler to end the current stream (local failure, protocol error).
  std::optional<std::string> abort_reason_;

  mutable absl::Mutex mu_;
  bool signal_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  LinkStatus status_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace nereid::lc
