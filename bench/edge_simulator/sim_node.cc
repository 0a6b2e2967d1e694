#include "bench/edge_simulator/sim_node.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/net/edge_protocol.h"
#include "grpc/grpc.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"

namespace nereid::bench {

namespace v1 = edge::v1;

SimNode::SimNode(Options options, SimTally* tally, DelayedRunner* runner)
    : options_(std::move(options)),
      tally_(tally),
      runner_(runner),
      reconnect_backoff_(options_.reconnect_backoff),
      report_backoff_(options_.report_retry) {
  stub_ = NewStub(options_.gm_address);
}

std::shared_ptr<v1::EdgeSync::Stub> SimNode::NewStub(const std::string& address) const {
  grpc::SslCredentialsOptions tls;
  tls.pem_root_certs = options_.ca_pem;
  tls.pem_cert_chain = options_.identity.cert_pem;
  tls.pem_private_key = options_.identity.key_pem;
  grpc::ChannelArguments args;
  // Each node is its own TCP+TLS connection with its own identity, never a shared subchannel.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  // A connection storm of 1,000 nodes may see refused or slow handshakes: retry within seconds,
  // not gRPC's 120 s cap (the real LC backs off the same way, 1 s x1.6, but we measure the GM).
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 500);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 5000);
  net::ApplyClientKeepalive(options_.keepalive, args);
  return v1::EdgeSync::NewStub(grpc::CreateCustomChannel(address, grpc::SslCredentials(tls), args));
}

SimNode::~SimNode() = default;

void SimNode::Connect() {
  v1::SyncRequest hello;
  v1::Hello* body = hello.mutable_hello();
  std::shared_ptr<NodeStream> stream;
  std::shared_ptr<v1::EdgeSync::Stub> stub;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_ || stream_ != nullptr) return;
    stub = stub_;
    body->set_node_name(name());
    body->set_lc_version(options_.lc_version);
    body->set_protocol_version(net::kEdgeProtocolVersion);
    for (const auto& [key, held] : held_) {
      v1::InventoryItem* item = body->add_inventory();
      *item->mutable_ref() = held.ref;
      item->set_version(held.version);
    }
    established_ = false;
    tally_->streams_opened.fetch_add(1);
    tally_->streams_live.fetch_add(1);
    // Published before it starts, so its first reaction finds it current.
    stream = NodeStream::Create(this);
    stream_ = stream;
  }
  stream->Start(stub.get(), std::move(hello));
}

void SimNode::Stop() {
  std::shared_ptr<NodeStream> stream;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    stream = stream_;
  }
  if (stream != nullptr) stream->Cancel();
}

bool SimNode::redirected() const {
  absl::MutexLock lock(&mu_);
  return !dialed_.empty();
}

bool SimNode::live() const {
  absl::MutexLock lock(&mu_);
  return stream_ != nullptr;
}

std::size_t SimNode::QueueDatasetReports(const SampleCount& samples) {
  std::vector<v1::SyncRequest> out;
  std::shared_ptr<NodeStream> stream;
  std::size_t queued = 0;
  {
    absl::MutexLock lock(&mu_);
    const absl::Time now = absl::Now();
    for (const auto& [key, held] : held_) {
      if (held.ref.kind() != net::kKindDataset) continue;
      Report report;
      report.record.node = name();
      report.record.key = key;
      report.record.seq = next_seq_++;
      v1::StatusReport& message = report.message;
      message.set_seq(report.record.seq);
      *message.mutable_ref() = held.ref;
      message.set_observed_version(held.version);
      v1::DatasetStatus* dataset = message.mutable_dataset();
      dataset->set_number_of_samples(samples(name(), key));
      *dataset->mutable_update_time() =
          net::ToProtoTime(now);
      to_send_.push_back(report.record.seq);
      reports_.emplace(report.record.seq, std::move(report));
      ++queued;
    }
    tally_->reports_queued.fetch_add(static_cast<int64_t>(queued));
    if (established_) TakeReportsLocked(&out);
    stream = stream_;
  }
  SendAll(stream, std::move(out));
  return queued;
}

std::vector<Arrival> SimNode::arrivals() const {
  absl::MutexLock lock(&mu_);
  return arrivals_;
}

std::vector<ReportRecord> SimNode::reports() const {
  absl::MutexLock lock(&mu_);
  std::vector<ReportRecord> records;
  records.reserve(reports_.size());
  for (const auto& [seq, report] : reports_) records.push_back(report.record);
  return records;
}

std::size_t SimNode::held() const {
  absl::MutexLock lock(&mu_);
  return held_.size();
}

std::string SimNode::last_error() const {
  absl::MutexLock lock(&mu_);
  return last_error_;
}

void SimNode::OnMessage(NodeStream* stream, const v1::SyncResponse& message) {
  const absl::Time at = absl::Now();
  std::vector<v1::SyncRequest> out;
  std::shared_ptr<NodeStream> current;
  {
    absl::MutexLock lock(&mu_);
    if (stream_.get() != stream) return;  // A stream being replaced.
    current = stream_;
    switch (message.message_case()) {
      case v1::SyncResponse::kHelloReply:
        established_ = true;
        tally_->streams_established.fetch_add(1);
        // Reports sent on an earlier stream and never answered go again, in seq order.
        for (auto it = reports_.rbegin(); it != reports_.rend(); ++it) {
          if (it->second.in_flight) {
            it->second.in_flight = false;
            to_send_.push_front(it->first);
          }
        }
        in_flight_ = 0;
        TakeReportsLocked(&out);
        break;
      case v1::SyncResponse::kChange:
        HandleChangeLocked(message.change(), at, &out);
        break;
      case v1::SyncResponse::kResyncDone:
        tally_->resyncs_done.fetch_add(1);
        reconnect_backoff_.Reset();
        break;
      case v1::SyncResponse::kReportAck:
        HandleReportAckLocked(message.report_ack(), at);
        TakeReportsLocked(&out);
        break;
      default:
        tally_->unexpected_messages.fetch_add(1);
        break;
    }
  }
  SendAll(current, std::move(out));
}

void SimNode::HandleChangeLocked(const v1::Change& change, absl::Time at,
                                 std::vector<v1::SyncRequest>* out) {
  v1::SyncRequest ack_request;
  v1::ChangeAck* ack = ack_request.mutable_change_ack();
  ack->set_nonce(change.nonce());
  Arrival arrival;
  arrival.node = name();
  arrival.at = at;
  if (change.has_upsert()) {
    const v1::Resource& resource = change.upsert();
    const std::string key = net::ObjectKey(resource.ref());
    auto [it, inserted] = held_.try_emplace(key);
    if (!inserted && it->second.version == resource.version() &&
        it->second.ref.uid() == resource.ref().uid()) {
      tally_->repeated_upserts.fetch_add(1);
    }
    it->second.ref = resource.ref();
    it->second.version = resource.version();
    *ack->mutable_ref() = resource.ref();
    ack->set_version(resource.version());
    arrival.key = key;
    arrival.version = resource.version();
    tally_->upserts.fetch_add(1);
  } else if (change.has_remove()) {
    const std::string key = net::ObjectKey(change.remove().ref());
    held_.erase(key);
    *ack->mutable_ref() = change.remove().ref();
    ack->set_version(change.remove().version());
    arrival.key = key;
    arrival.version = change.remove().version();
    arrival.removed = true;
    tally_->removes.fetch_add(1);
  } else {
    tally_->unexpected_messages.fetch_add(1);
    return;
  }
  arrivals_.push_back(std::move(arrival));
  out->push_back(std::move(ack_request));
}

void SimNode::HandleReportAckLocked(const v1::ReportAck& ack, absl::Time at) {
  auto it = reports_.find(ack.seq());
  if (it == reports_.end() || !it->second.in_flight) {
    tally_->unexpected_messages.fetch_add(1);
    return;
  }
  Report& report = it->second;
  report.in_flight = false;
  --in_flight_;
  switch (ack.result()) {
    case v1::REPORT_ACCEPTED:
    case v1::REPORT_REJECTED:
      report.record.answered = at;
      report.record.result = ack.result();
      report.record.reason = ack.reason();
      (ack.result() == v1::REPORT_ACCEPTED ? tally_->reports_accepted : tally_->reports_rejected)
          .fetch_add(1);
      if (ack.result() == v1::REPORT_ACCEPTED) report_backoff_.Reset();
      break;
    default: {
      // RETRY (or a result this build does not know): keep it and resend later, as the LC does.
      report.record.reason = ack.reason();
      tally_->reports_retry.fetch_add(1);
      if (ack.retry_after_ms() > 0) tally_->reports_retry_estimated.fetch_add(1);
      resend_round_.push_back(ack.seq());
      if (resend_round_.size() > 1) break;  // joins the round already scheduled
      const bool estimate = ack.retry_after_ms() > 0 && options_.honor_retry_after;
      const absl::Duration hint = absl::Milliseconds(ack.retry_after_ms());
      const absl::Duration delay =
          estimate ? report_backoff_.UniformIn(hint / 2, hint) : report_backoff_.Next();
      runner_->After(delay, [this] { ResendRound(); });
      break;
    }
  }
}

void SimNode::ResendRound() {
  std::vector<v1::SyncRequest> out;
  std::shared_ptr<NodeStream> stream;
  {
    absl::MutexLock lock(&mu_);
    tally_->resend_rounds.fetch_add(1);
    for (uint64_t seq : resend_round_) {
      auto it = reports_.find(seq);
      if (it == reports_.end() || it->second.in_flight ||
          it->second.record.answered != absl::InfinitePast()) {
        continue;
      }
      to_send_.push_back(seq);
    }
    resend_round_.clear();
    if (established_) TakeReportsLocked(&out);
    stream = stream_;
  }
  SendAll(stream, std::move(out));
}

void SimNode::TakeReportsLocked(std::vector<v1::SyncRequest>* out) {
  const absl::Time now = absl::Now();
  while (in_flight_ < options_.max_reports_in_flight && !to_send_.empty()) {
    auto it = reports_.find(to_send_.front());
    to_send_.pop_front();
    if (it == reports_.end() || it->second.in_flight) continue;
    Report& report = it->second;
    report.in_flight = true;
    ++in_flight_;
    if (report.record.attempts++ == 0) report.record.first_sent = now;
    v1::SyncRequest request;
    *request.mutable_report() = report.message;
    out->push_back(std::move(request));
    tally_->reports_sent.fetch_add(1);
  }
}

void SimNode::SendAll(const std::shared_ptr<NodeStream>& stream, std::vector<v1::SyncRequest> out) {
  if (stream == nullptr) return;
  for (v1::SyncRequest& request : out) {
    // A stream that ended meanwhile drops it; the reconnect resends reports, and changes are
    // sent again by the GM from the inventory.
    if (!stream->Send(std::move(request))) return;
  }
}

void SimNode::OnEnded(NodeStream* stream, const grpc::Status& status, const std::string& owner) {
  bool reconnect = false;
  absl::Duration delay;
  std::string next;  // where the next stream goes; "" = the configured address
  bool switch_stub = false;
  {
    absl::MutexLock lock(&mu_);
    if (stream_.get() != stream) return;
    stream_.reset();
    const bool was_established = std::exchange(established_, false);
    tally_->streams_live.fetch_sub(1);
    if (!stopping_) {
      last_error_ = absl::StrCat(status.error_code(), ": ", status.error_message());
      tally_->streams_ended.fetch_add(1);
      reconnect = true;
      // The LC's rule (cloud_link.cc RedirectFrom): an owner trailer is followed at once from the
      // configured address, or from anywhere after a served stream (a move); otherwise the node
      // goes back to its configured address after the backoff.
      const bool follow = status.error_code() == grpc::StatusCode::UNAVAILABLE && !owner.empty() &&
                          owner != options_.gm_address && (dialed_.empty() || was_established);
      if (follow) {
        next = owner;
        tally_->redirects.fetch_add(1);
        delay = absl::ZeroDuration();
      } else {
        delay = reconnect_backoff_.Next();
      }
      switch_stub = next != dialed_;
    }
  }
  if (!reconnect) return;
  if (switch_stub) {
    std::shared_ptr<v1::EdgeSync::Stub> stub = NewStub(next.empty() ? options_.gm_address : next);
    absl::MutexLock lock(&mu_);
    stub_ = std::move(stub);
    dialed_ = next;
  }
  runner_->After(delay, [this] { Connect(); });
}

}  // namespace nereid::bench
