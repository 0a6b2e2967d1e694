#include "globalmanager/edgehub/edge_relay.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/log/log.h"
#include "common/status/macros.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"

namespace nereid::gm {
namespace {

// The name every replica's certificate carries: its first DNS name, else its CN.
absl::StatusOr<std::string> OwnCertificateName(const net::TlsOptions& tls) {
  ASSIGN_OR_RETURN(std::string pem, net::ReadPemFile(tls.cert_file));
  ASSIGN_OR_RETURN(std::vector<std::string> names, net::CertificateNames(pem));
  if (names.size() > 1) return names[1];
  if (!names.empty() && !names[0].empty()) return names[0];
  return absl::InvalidArgumentError(
      absl::StrCat(tls.cert_file, ": the certificate names nothing (no CN, no DNS name)"));
}

}  // namespace

absl::StatusOr<std::unique_ptr<EdgeRelay>> EdgeRelay::Create(Options options) {
  ASSIGN_OR_RETURN(std::shared_ptr<grpc::ChannelCredentials> credentials,
                   net::MakeChannelCredentials(options.tls));
  std::string verified_name = options.verified_name;
  if (verified_name.empty() && !options.tls.insecure) {
    ASSIGN_OR_RETURN(verified_name, OwnCertificateName(options.tls));
  }
  return std::unique_ptr<EdgeRelay>(
      new EdgeRelay(std::move(options), std::move(credentials), std::move(verified_name)));
}

EdgeRelay::EdgeRelay(Options options, std::shared_ptr<grpc::ChannelCredentials> credentials,
                     std::string verified_name)
    : options_(std::move(options)),
      credentials_(std::move(credentials)),
      verified_name_(std::move(verified_name)),
      registry_(options_.registry ? options_.registry
                                  : std::make_shared<prometheus::Registry>()) {
  prometheus::Registry& r = *registry_;
  relayed_ = &prometheus::BuildCounter()
                  .Name("nereid_edgehub_streams_relayed_total")
                  .Help("Node streams this replica took to relay to the leader's edge hub")
                  .Register(r)
                  .Add({});
  failed_ = &prometheus::BuildCounter()
                 .Name("nereid_edgehub_relay_failures_total")
                 .Help(
                     "Relayed node streams the leader never answered (unreachable, or it refused "
                     "the relay); the node was sent to the leader's address instead")
                 .Register(r)
                 .Add({});
  redirected_ = &prometheus::BuildCounter()
                     .Name("nereid_edgehub_relay_redirects_total")
                     .Help(
                         "Node streams this replica took to relay and sent to the replica that "
                         "owns their node instead (edge shards)")
                     .Register(r)
                     .Add({});
  open_gauge_ = &prometheus::BuildGauge()
                     .Name("nereid_edgehub_relayed_streams")
                     .Help("Node streams this replica relays to the leader now")
                     .Register(r)
                     .Add({});
}

EdgeRelay::~EdgeRelay() {
  Close("this GM replica is stopping");
  absl::MutexLock lock(&mu_);
  // gRPC ends every cancelled call; the bound only keeps a wedged stream from hanging the exit.
  const bool ended = mu_.AwaitWithTimeout(
      absl::Condition(
          +[](absl::flat_hash_map<uint64_t, std::weak_ptr<RelayedStream>>* streams) {
            return streams->empty();
          },
          &streams_),
      absl::Seconds(30));
  if (!ended) {
    LOG(ERROR) << "edge relay: " << streams_.size() << " relayed streams did not end in 30 s";
  }
}

void EdgeRelay::SetLeaderAddress(const std::string& address) {
  absl::MutexLock lock(&mu_);
  if (closed_ || address == leader_address_) return;
  leader_address_ = address;
  leader_.reset();
  if (address.empty()) return;
  grpc::ChannelArguments args;
  net::ApplyClientKeepalive(options_.keepalive, args);
  args.SetMaxReceiveMessageSize(options_.max_receive_message_bytes);
  if (!verified_name_.empty()) args.SetSslTargetNameOverride(verified_name_);
  leader_ = edge::v1::EdgeSync::NewStub(grpc::CreateCustomChannel(address, credentials_, args));
  LOG(INFO) << "edge relay: relaying node streams to the leader at " << address;
}

NodeStreamReactor* EdgeRelay::Relay(grpc::CallbackServerContext* context, net::PeerIdentity peer,
                                    std::string unserved_owner, bool allow_unauthenticated,
                                    std::function<void()> on_done) {
  absl::MutexLock lock(&mu_);
  if (closed_ || leader_ == nullptr) return nullptr;
  const uint64_t id = next_id_++;
  RelayedStream::Hooks hooks;
  hooks.allow_unauthenticated = allow_unauthenticated;
  hooks.ownership = options_.ownership;
  hooks.unserved_owner = std::move(unserved_owner);
  hooks.on_redirected = [this] { redirected_->Increment(); };
  hooks.on_upstream_done = [this](bool answered) {
    if (!answered) failed_->Increment();
  };
  hooks.on_done = [this, id, on_done = std::move(on_done)] {
    if (on_done) on_done();
    absl::MutexLock done_lock(&mu_);
    streams_.erase(id);
    opened_.erase(id);
    open_gauge_->Decrement();
  };
  // The stream's first callbacks run after Sync returns its reactor, after this lock is released.
  auto [stream, reactor] = RelayedStream::Start(context, std::move(peer),
                                                {leader_, leader_address_}, std::move(hooks));
  streams_.emplace(id, stream);
  opened_.emplace(id, options_.clock->Now());
  relayed_->Increment();
  open_gauge_->Increment();
  return reactor;
}

std::vector<std::shared_ptr<RelayedStream>> EdgeRelay::Streams() const {
  std::vector<std::shared_ptr<RelayedStream>> streams;
  absl::MutexLock lock(&mu_);
  streams.reserve(streams_.size());
  for (const auto& [id, weak] : streams_) {
    if (std::shared_ptr<RelayedStream> stream = weak.lock()) streams.push_back(std::move(stream));
  }
  return streams;
}

std::vector<std::string> EdgeRelay::Nodes() const {
  std::vector<std::string> nodes;
  for (const auto& stream : Streams()) {
    if (std::string node = stream->node(); !node.empty()) nodes.push_back(std::move(node));
  }
  return nodes;
}

int EdgeRelay::MoveNodes(const absl::flat_hash_map<std::string, std::string>& moves) {
  int moved = 0;
  if (moves.empty()) return moved;
  for (const auto& stream : Streams()) {
    const std::string node = stream->node();
    auto it = node.empty() ? moves.end() : moves.find(node);
    if (it == moves.end() || it->second == stream->unserved_owner()) continue;
    stream->Cancel(grpc::Status(grpc::StatusCode::UNAVAILABLE,
                                absl::StrCat("node ", node, " moves to the GM replica at ",
                                             it->second)),
                   it->second);
    ++moved;
  }
  return moved;
}

int EdgeRelay::EndStreamsWithoutHello(absl::Duration timeout) {
  const absl::Time opened_before = options_.clock->Now() - timeout;
  std::vector<std::shared_ptr<RelayedStream>> due;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = opened_.begin(); it != opened_.end();) {
      if (it->second > opened_before) {
        ++it;
        continue;
      }
      auto stream = streams_.find(it->first);
      if (stream != streams_.end()) {
        if (std::shared_ptr<RelayedStream> open = stream->second.lock()) {
          due.push_back(std::move(open));
        }
      }
      opened_.erase(it++);
    }
  }
  const grpc::Status why(
      grpc::StatusCode::DEADLINE_EXCEEDED,
      absl::StrCat("no Hello within ", absl::FormatDuration(timeout), " of opening the stream"));
  int ended = 0;
  for (const auto& stream : due) ended += stream->CancelIfAwaitingHello(why) ? 1 : 0;
  return ended;
}

void EdgeRelay::EndAll(const std::string& why) {
  const std::vector<std::shared_ptr<RelayedStream>> streams = Streams();
  for (const auto& stream : streams) {
    stream->Cancel(grpc::Status(grpc::StatusCode::UNAVAILABLE, why));
  }
}

void EdgeRelay::Close(const std::string& why) {
  {
    absl::MutexLock lock(&mu_);
    closed_ = true;
    leader_address_.clear();
    leader_.reset();
  }
  EndAll(why);
}

bool EdgeRelay::relaying() const {
  absl::MutexLock lock(&mu_);
  return !closed_ && leader_ != nullptr;
}

std::size_t EdgeRelay::open_streams() const {
  absl::MutexLock lock(&mu_);
  return streams_.size();
}

}  // namespace nereid::gm
