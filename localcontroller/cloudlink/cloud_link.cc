#include "localcontroller/cloudlink/cloud_link.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/failpoint/failpoint.h"
#include "common/log/log.h"
#include "common/net/edge_protocol.h"
#include "common/net/host_port.h"
#include "common/status/macros.h"
#include "common/strings/absl_compat.h"
#include "grpc/grpc.h"
#include "grpcpp/create_channel.h"
#include "localcontroller/cloudlink/spec_validation.h"

namespace nereid::lc {

namespace v1 = edge::v1;

namespace {

// The host of HOST:PORT without brackets: the name the GM's certificate is verified against.
std::string VerifiedName(const std::string& address) {
  absl::StatusOr<net::HostPort> parsed = net::ParseHostPort(address);
  return parsed.ok() ? parsed->host : address.substr(0, address.rfind(':'));
}

}  // namespace

std::string_view LinkStateName(LinkState state) {
  switch (state) {
    case LinkState::kIdle: return "idle";
    case LinkState::kConnecting: return "connecting";
    case LinkState::kConnected: return "connected";
    case LinkState::kBackoff: return "backoff";
    case LinkState::kStopped: return "stopped";
  }
  return "unknown";
}

absl::StatusOr<std::unique_ptr<CloudLink>> CloudLink::Create(CloudLinkOptions options,
                                                             DesiredStateStore* store,
                                                             ReportSource* reports) {
  if (store == nullptr || reports == nullptr) {
    return absl::InvalidArgumentError("cloud link needs a desired-state store and a report source");
  }
  if (options.gm_address.empty()) {
    return absl::InvalidArgumentError("no GM address (--gm HOST:PORT or env GM_ADDRESS)");
  }
  if (options.node_name.empty()) {
    return absl::InvalidArgumentError("no node name (--node or env NODENAME)");
  }
  if (options.max_reports_in_flight < 1) options.max_reports_in_flight = 1;
  if (options.clock == nullptr) options.clock = Clock::Real();
  ASSIGN_OR_RETURN(std::shared_ptr<grpc::ChannelCredentials> credentials,
                   net::MakeChannelCredentials(options.tls));
  if (!options.tls.insecure) {
    // The GM refuses a certificate that does not name the node; say so now, not on every retry.
    ASSIGN_OR_RETURN(std::string pem, net::ReadPemFile(options.tls.cert_file));
    ASSIGN_OR_RETURN(std::vector<std::string> names, net::CertificateNames(pem));
    if (std::find(names.begin(), names.end(), options.node_name) == names.end()) {
      return absl::FailedPreconditionError(
          absl::StrCat(options.tls.cert_file, " names [", absl::StrJoin(names, ", "),
                       "], not node ", options.node_name, ": the GM would refuse it"));
    }
  }
  return std::unique_ptr<CloudLink>(
      new CloudLink(std::move(options), std::move(credentials), store, reports));
}

CloudLink::CloudLink(CloudLinkOptions options,
                     std::shared_ptr<grpc::ChannelCredentials> credentials,
                     DesiredStateStore* store, ReportSource* reports)
    : options_(std::move(options)),
      credentials_(std::move(credentials)),
      store_(store),
      reports_(reports),
      clock_(options_.clock),
      backoff_(options_.backoff, options_.jitter_source),
      report_backoff_(options_.report_retry, options_.jitter_source),
      summary_(options_.node_summary, options_.summary_interval) {}

CloudLink::~CloudLink() { Stop(); }

void CloudLink::Start() {
  {
    absl::MutexLock lock(&mu_);
    if (thread_.joinable() || stopping_) return;
  }
  reports_->SetWakeup([this] { Wake(); });
  thread_ = std::thread([this] { Run(); });
}

void CloudLink::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) {
    thread_.join();
    reports_->SetWakeup(nullptr);
  }
  absl::MutexLock lock(&mu_);
  status_.state = LinkState::kStopped;
}

LinkStatus CloudLink::status() const {
  absl::MutexLock lock(&mu_);
  return status_;
}

void CloudLink::Wake() {
  absl::MutexLock lock(&mu_);
  signal_ = true;
}

void CloudLink::RecordError(const std::string& error) {
  absl::MutexLock lock(&mu_);
  status_.last_error = error;
  status_.last_error_at = clock_->Now();
}

std::unique_ptr<v1::EdgeSync::Stub> CloudLink::NewStub(const std::string& address) {
  grpc::ChannelArguments args;
  net::ApplyClientKeepalive(options_.keepalive, args);
  // A fresh channel with its own subchannel per attempt: every attempt really dials, and our
  // backoff is the only one governing the retries (a shared subchannel would add its own).
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetMaxReceiveMessageSize(64 << 20);
  if (!options_.server_name_override.empty()) {
    args.SetSslTargetNameOverride(options_.server_name_override);
  } else if (address != options_.gm_address) {
    // A replica's own address (a pod IP): it must prove the name the GM Service has, not the IP.
    args.SetSslTargetNameOverride(VerifiedName(options_.gm_address));
  }
  return v1::EdgeSync::NewStub(grpc::CreateCustomChannel(address, credentials_, args));
}

void CloudLink::Run() {
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) break;
    }
    const bool healthy = RunStream();
    absl::MutexLock lock(&mu_);
    if (stopping_) break;
    if (!redirect_.empty()) continue;  // straight to the replica that serves us
    if (healthy) {
      backoff_.Reset();
      status_.consecutive_failures = 0;
    } else {
      ++status_.consecutive_failures;
    }
    const absl::Duration delay = backoff_.Next();
    status_.state = LinkState::kBackoff;
    status_.last_backoff = delay;
    status_.next_attempt = clock_->Now() + delay;
    LOG(INFO) << "cloud link: node " << options_.node_name << ": reconnecting to "
              << options_.gm_address << " in " << delay;
    clock_->AwaitWithDeadline(&mu_, absl::Condition(&stopping_), status_.next_attempt);
  }
  absl::MutexLock lock(&mu_);
  status_.state = LinkState::kStopped;
}

bool CloudLink::RunStream() {
  const std::string dialed = std::exchange(redirect_, std::string());  // "": the configured one
  in_flight_.clear();
  send_cursor_ = 0;  // everything still unacked goes out once more on this stream
  resend_at_ = absl::InfiniteFuture();
  {
    absl::MutexLock lock(&mu_);
    status_.report_resend_at = resend_at_;
  }

  v1::SyncRequest hello;
  v1::Hello* h = hello.mutable_hello();
  h->set_node_name(options_.node_name);
  h->set_lc_version(options_.lc_version);
  h->set_lc_commit(options_.lc_commit);
  h->set_protocol_version(net::kEdgeProtocolVersion);
  absl::StatusOr<std::vector<v1::InventoryItem>> inventory = store_->Inventory();
  if (!inventory.ok()) {
    LOG(ERROR) << "cloud link: node " << options_.node_name
               << ": cannot read the inventory: " << inventory.status();
    RecordError(absl::StrCat("reading inventory: ", inventory.status().ToString()));
    return false;
  }
  for (v1::InventoryItem& item : *inventory) *h->add_inventory() = std::move(item);

  const std::string& address = dialed.empty() ? options_.gm_address : dialed;
  std::unique_ptr<v1::EdgeSync::Stub> stub = NewStub(address);
  LinkStream stream([this] { Wake(); }, static_cast<std::size_t>(options_.max_inbox));
  {
    absl::MutexLock lock(&mu_);
    status_.state = LinkState::kConnecting;
    status_.synced = false;
    ++status_.attempts;
    status_.server = address;
  }
  if (!unserved_owner_.empty()) stream.AddMetadata(net::kUnservedOwnerMetadata, unserved_owner_);
  stream.Start(stub.get(), std::move(hello));

  bool established = false;
  absl::Time established_at = absl::InfinitePast();
  const absl::Time hello_deadline = clock_->Now() + options_.hello_timeout;
  std::string abort_reason;
  while (true) {
    while (abort_reason.empty()) {
      std::optional<v1::SyncResponse> message = stream.Take();
      if (!message.has_value()) break;
      HandleMessage(stream, *message, &established, &established_at);
      if (abort_reason_.has_value()) abort_reason = *std::exchange(abort_reason_, std::nullopt);
    }
    if (!abort_reason.empty() || stream.done()) break;
    const absl::Time now = clock_->Now();
    if (!established && now >= hello_deadline) {
      abort_reason =
          absl::StrCat("no HelloReply within ", absl::FormatDuration(options_.hello_timeout));
      break;
    }
    if (established) {
      if (now >= resend_at_) {
        send_cursor_ = 0;
        resend_at_ = absl::InfiniteFuture();
        absl::MutexLock lock(&mu_);
        status_.report_resend_at = resend_at_;
      }
      SendReports(stream);
      if (std::optional<v1::NodeSummary> summary = summary_.Due(clock_->Now())) {
        v1::SyncRequest request;
        *request.mutable_summary() = *std::move(summary);
        stream.Send(std::move(request));
      }
    }
    absl::MutexLock lock(&mu_);
    if (stopping_) {
      abort_reason = "stopping";
      break;
    }
    const absl::Time deadline =
        established ? std::min(resend_at_, summary_.next_check()) : hello_deadline;
    auto woken = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return signal_ || stopping_; };
    clock_->AwaitWithDeadline(&mu_, absl::Condition(&woken), deadline);
    signal_ = false;
  }
  if (!stream.done()) stream.Cancel();
  stream.AwaitDone();

  const absl::Time end = clock_->Now();
  const bool healthy = established && end - established_at >= options_.healthy_after;
  const grpc::Status status = stream.status();
  std::string error = abort_reason.empty() ? absl::StrCat("stream ended: ", status.error_code(),
                                                          " ", status.error_message())
                                           : abort_reason;
  bool stopping;
  {
    absl::MutexLock lock(&mu_);
    stopping = stopping_;
    status_.synced = false;
  }
  if (!stopping) {
    RecordError(error);
    const bool refused = status.error_code() == grpc::StatusCode::PERMISSION_DENIED ||
                         status.error_code() == grpc::StatusCode::UNAUTHENTICATED ||
                         status.error_code() == grpc::StatusCode::FAILED_PRECONDITION;
    if (refused) {
      LOG(ERROR) << "cloud link: node " << options_.node_name
                 << ": the GM refused the stream: " << error;
    } else {
      LOG(WARNING) << "cloud link: node " << options_.node_name << ": " << error;
    }
    redirect_ = RedirectFrom(stream, dialed, established);
  }
  if (established) {
    unserved_owner_.clear();
  } else if (!dialed.empty()) {
    unserved_owner_ = dialed;  // the owner we were sent to did not serve us
  }
  return healthy;
}

std::string CloudLink::RedirectFrom(const LinkStream& stream, const std::string& dialed,
                                    bool established) {
  // One hop: a replica reached through a redirect that refuses us too sends us back to the
  // configured address after the backoff, so replicas that disagree cannot bounce a node around.
  // A stream that was served and then ended with an owner is a move (another replica owns this
  // node now): followed wherever the stream was dialled, since each hop took a served stream.
  if (!dialed.empty() && !established) return "";
  if (stream.status().error_code() != grpc::StatusCode::UNAVAILABLE) return "";
  const std::string owner = stream.Trailer(net::kEdgeOwnerTrailer);
  if (owner.empty()) return "";
  if (!net::ParseHostPort(owner).ok() || owner == options_.gm_address) {
    LOG(WARNING) << "cloud link: node " << options_.node_name << ": ignoring the GM's "
                 << net::kEdgeOwnerTrailer << " \"" << owner << "\" (not another HOST:PORT)";
    return "";
  }
  LOG(INFO) << "cloud link: node " << options_.node_name
            << ": the GM replica serving this node is at " << owner << "; dialing it";
  absl::MutexLock lock(&mu_);
  ++status_.redirects;
  return owner;
}

void CloudLink::HandleMessage(LinkStream& stream, const v1::SyncResponse& message,
                              bool* established, absl::Time* established_at) {
  switch (message.message_case()) {
    case v1::SyncResponse::kHelloReply: {
      *established = true;
      *established_at = clock_->Now();
      summary_.OnEstablished(message.hello_reply(), *established_at);
      if (message.hello_reply().node_name() != options_.node_name) {
        LOG(WARNING) << "cloud link: the GM knows us as " << message.hello_reply().node_name()
                     << ", not " << options_.node_name;
      }
      std::string server;
      {
        absl::MutexLock lock(&mu_);
        status_.state = LinkState::kConnected;
        status_.last_connected = *established_at;
        server = status_.server;
      }
      LOG(INFO) << "cloud link: node " << options_.node_name << ": connected to " << server << " ("
                << message.hello_reply().gm_version() << ")";
      return;
    }
    case v1::SyncResponse::kChange:
      if (!*established) {
        abort_reason_ = "protocol error: a change before the HelloReply";
        return;
      }
      HandleChange(stream, message.change());
      return;
    case v1::SyncResponse::kResyncDone: {
      const absl::Time now = clock_->Now();
      if (absl::Status recorded = store_->RecordSync(now); !recorded.ok()) {
        LOG(WARNING) << "cloud link: recording the sync time: " << recorded;
      }
      LOG(INFO) << "cloud link: node " << options_.node_name << ": in sync with the GM ("
                << message.resync_done().upserts() << " upserts, "
                << message.resync_done().removes() << " removes)";
      absl::MutexLock lock(&mu_);
      status_.synced = true;
      status_.last_sync = now;
      return;
    }
    case v1::SyncResponse::kReportAck: HandleReportAck(message.report_ack()); return;
    case v1::SyncResponse::MESSAGE_NOT_SET: break;
  }
  LOG(WARNING) << "cloud link: ignoring an unknown message from the GM (newer GM?)";
}

void CloudLink::HandleChange(LinkStream& stream, const v1::Change& change) {
  v1::SyncRequest reply;
  v1::ChangeAck* ack = reply.mutable_change_ack();
  ack->set_nonce(change.nonce());
  switch (change.op_case()) {
    case v1::Change::kUpsert:
      *ack->mutable_ref() = change.upsert().ref();
      ack->set_version(change.upsert().version());
      break;
    case v1::Change::kRemove:
      *ack->mutable_ref() = change.remove().ref();
      ack->set_version(change.remove().version());
      break;
    case v1::Change::OP_NOT_SET:
      break;
  }
  const absl::Status applied = ApplyChange(change, options_.node_name, *store_);
  const std::string what = absl::StrCat(net::RefString(ack->ref()), " version ", ack->version());
  if (!applied.ok()) {
    if (!absl::IsInvalidArgument(applied) && !absl::IsFailedPrecondition(applied)) {
      // A local failure (disk, database): not the spec's fault. Do not NACK; drop the stream so
      // the resync after the backoff tries again.
      LOG(ERROR) << "cloud link: applying " << what << " failed: " << applied;
      abort_reason_ = absl::StrCat("applying ", what, ": ", applied.ToString());
      return;
    }
    LOG(WARNING) << "cloud link: rejecting " << what << ": " << applied;
    *ack->mutable_error_detail() = net::ToErrorDetail(applied);
    absl::MutexLock lock(&mu_);
    ++status_.changes_nacked;
  } else {
    LOG(DEBUG) << "cloud link: applied " << what;
    absl::MutexLock lock(&mu_);
    ++status_.changes_applied;
  }
  stream.Send(std::move(reply));
}

void CloudLink::HandleReportAck(const v1::ReportAck& ack) {
  const uint64_t seq = ack.seq();
  in_flight_.erase(seq);
  absl::Status done;
  switch (ack.result()) {
    case v1::REPORT_ACCEPTED: {
      // Crash tests: the report is in the Kubernetes API but still in the outbox.
      failpoint::Hit(failpoint::kLcReportAckBeforeCommit);
      done = reports_->Ack(seq);
      report_backoff_.Reset();
      absl::MutexLock lock(&mu_);
      ++status_.reports_acked;
      break;
    }
    case v1::REPORT_REJECTED: {
      LOG(WARNING) << "cloud link: the GM rejected report " << seq << ": " << ack.reason() << ": "
                   << ack.message();
      done = reports_->Reject(seq, absl::StrCat(ack.reason(), ": ", ack.message()));
      absl::MutexLock lock(&mu_);
      ++status_.reports_rejected;
      break;
    }
    default: {  // REPORT_RETRY, or a result this LC does not know: keep it and resend later
      // One resend round covers every report answered RETRY until then. A GM that is busy says
      // when it expects to have taken what it holds: a random point in the second half of that
      // replaces the backoff (which stays for an API server that is down), so a node does not
      // wait minutes behind a burst that drains in seconds, and nodes told the same spread out.
      if (resend_at_ == absl::InfiniteFuture()) {
        const absl::Duration estimate = absl::Milliseconds(ack.retry_after_ms());
        resend_at_ = clock_->Now() + (estimate > absl::ZeroDuration()
                                          ? report_backoff_.UniformIn(estimate / 2, estimate)
                                          : report_backoff_.Next());
      }
      LOG(INFO) << "cloud link: the GM could not take report " << seq << " now (" << ack.reason()
                << ": " << ack.message() << "); resending at " << resend_at_;
      absl::MutexLock lock(&mu_);
      ++status_.reports_retried;
      status_.report_resend_at = resend_at_;
      break;
    }
  }
  if (!done.ok()) {
    // The entry stays in the outbox and goes out again after the next reconnect.
    LOG(ERROR) << "cloud link: recording the answer to report " << seq << ": " << done;
  }
}

void CloudLink::SendReports(LinkStream& stream) {
  int room = options_.max_reports_in_flight - static_cast<int>(in_flight_.size());
  // Each round advances the cursor past what it looked at, so this ends.
  while (room > 0) {
    absl::StatusOr<std::vector<v1::StatusReport>> batch = reports_->Pending(room, send_cursor_);
    if (!batch.ok()) {
      LOG(ERROR) << "cloud link: reading the outbox: " << batch.status();
      return;
    }
    if (batch->empty()) return;
    for (v1::StatusReport& report : *batch) {
      send_cursor_ = std::max(send_cursor_, report.seq());
      if (in_flight_.contains(report.seq())) continue;
      in_flight_.insert(report.seq());
      failpoint::Hit(failpoint::kLcReportBeforeSend);  // crash tests: only in the outbox
      v1::SyncRequest request;
      *request.mutable_report() = std::move(report);
      stream.Send(std::move(request));
      {
        absl::MutexLock lock(&mu_);
        ++status_.reports_sent;
      }
      if (--room == 0) return;
    }
  }
}

}  // namespace nereid::lc
