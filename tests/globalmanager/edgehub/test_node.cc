#include "tests/globalmanager/edgehub/test_node.h"

#include <catch2/catch.hpp>

#include "common/net/edge_protocol.h"
#include "common/net/tls.h"
#include "grpcpp/create_channel.h"

namespace nereid::testing {

namespace v1 = edge::v1;

TestNode::TestNode(int port, const CertSet& certs, const std::string& cert_node)
    : TestNode(Channel(port, certs.ClientTls(cert_node))) {}

std::shared_ptr<grpc::Channel> TestNode::Channel(int port, const net::TlsOptions& tls) {
  auto creds = net::MakeChannelCredentials(tls);
  REQUIRE(creds.ok());
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // its own connection
  return grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(port), *creds, args);
}

TestNode::TestNode(std::shared_ptr<grpc::Channel> channel,
                   const std::vector<std::pair<std::string, std::string>>& metadata) {
  stub_ = v1::EdgeSync::NewStub(channel);
  for (const auto& [key, value] : metadata) context_.AddMetadata(key, value);
  // Bounds every test stream even if a test forgets to end it.
  context_.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  stream_ = stub_->Sync(&context_);
  reader_ = std::thread([this] { ReadLoop(); });
}

TestNode::~TestNode() {
  context_.TryCancel();
  if (reader_.joinable()) reader_.join();
  if (!status_.has_value()) status_ = stream_->Finish();
}

void TestNode::ReadLoop() {
  v1::SyncResponse response;
  while (stream_->Read(&response)) {
    absl::MutexLock lock(&mu_);
    inbox_.push_back(std::move(response));
    response = v1::SyncResponse();
  }
  absl::MutexLock lock(&mu_);
  ended_ = true;
}

void TestNode::Send(const v1::SyncRequest& request) { stream_->Write(request); }

void TestNode::Hello(const std::string& claimed_node,
                     const std::vector<v1::InventoryItem>& inventory) {
  v1::SyncRequest request;
  v1::Hello* hello = request.mutable_hello();
  hello->set_node_name(claimed_node);
  hello->set_lc_version("test");
  hello->set_protocol_version(net::kEdgeProtocolVersion);
  for (const v1::InventoryItem& item : inventory) *hello->add_inventory() = item;
  Send(request);
}

void TestNode::Ack(const v1::Change& change) {
  v1::SyncRequest request;
  v1::ChangeAck* ack = request.mutable_change_ack();
  ack->set_nonce(change.nonce());
  if (change.has_upsert()) {
    *ack->mutable_ref() = change.upsert().ref();
    ack->set_version(change.upsert().version());
  } else {
    *ack->mutable_ref() = change.remove().ref();
    ack->set_version(change.remove().version());
  }
  Send(request);
}

void TestNode::Nack(const v1::Change& change, const std::string& message) {
  v1::SyncRequest request;
  v1::ChangeAck* ack = request.mutable_change_ack();
  ack->set_nonce(change.nonce());
  *ack->mutable_ref() = change.upsert().ref();
  ack->set_version(change.upsert().version());
  *ack->mutable_error_detail() = net::ToErrorDetail(absl::InvalidArgumentError(message));
  Send(request);
}

void TestNode::Report(const v1::StatusReport& report) {
  v1::SyncRequest request;
  *request.mutable_report() = report;
  Send(request);
}

std::optional<v1::SyncResponse> TestNode::Next(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !inbox_.empty() || ended_; };
  mu_.AwaitWithTimeout(absl::Condition(&ready), timeout);
  if (inbox_.empty()) return std::nullopt;
  v1::SyncResponse response = std::move(inbox_.front());
  inbox_.pop_front();
  return response;
}

v1::Change TestNode::NextChange() {
  std::optional<v1::SyncResponse> response = Next();
  REQUIRE(response.has_value());
  INFO(response->DebugString());
  REQUIRE(response->has_change());
  return response->change();
}

v1::ReportAck TestNode::NextReportAck() {
  std::optional<v1::SyncResponse> response = Next();
  REQUIRE(response.has_value());
  INFO(response->DebugString());
  REQUIRE(response->has_report_ack());
  return response->report_ack();
}

bool TestNode::Ended() {
  absl::MutexLock lock(&mu_);
  return ended_;
}

grpc::Status TestNode::AwaitEnd(absl::Duration timeout) {
  {
    absl::MutexLock lock(&mu_);
    auto ended = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return ended_; };
    if (!mu_.AwaitWithTimeout(absl::Condition(&ended), timeout)) context_.TryCancel();
  }
  reader_.join();
  status_ = stream_->Finish();
  return *status_;
}

std::string TestNode::Trailer(const std::string& key) const {
  const auto& trailers = context_.GetServerTrailingMetadata();
  auto it = trailers.find(key);
  return it == trailers.end() ? std::string() : std::string(it->second.data(), it->second.size());
}

void TestNode::Cancel() {
  context_.TryCancel();
  reader_.join();
  status_ = stream_->Finish();
}

v1::InventoryItem Item(const std::string& kind, const std::string& name, const std::string& version,
                       const std::string& uid) {
  v1::InventoryItem item;
  item.mutable_ref()->set_kind(kind);
  item.mutable_ref()->set_namespace_("default");
  item.mutable_ref()->set_name(name);
  item.mutable_ref()->set_uid(uid);
  item.set_version(version);
  return item;
}

v1::Resource DatasetResource(const std::string& name, const std::string& version,
                             const std::string& node, const std::string& uid) {
  v1::Resource r;
  r.mutable_ref()->set_kind("Dataset");
  r.mutable_ref()->set_namespace_("default");
  r.mutable_ref()->set_name(name);
  r.mutable_ref()->set_uid(uid);
  r.set_version(version);
  r.mutable_dataset()->set_url("/data/" + name + ".txt");
  r.mutable_dataset()->set_format("txt");
  r.mutable_dataset()->set_node_name(node);
  return r;
}

v1::StatusReport DatasetReport(uint64_t seq, const std::string& name, int64_t samples) {
  v1::StatusReport report;
  report.set_seq(seq);
  report.mutable_ref()->set_kind("Dataset");
  report.mutable_ref()->set_namespace_("default");
  report.mutable_ref()->set_name(name);
  report.set_observed_version("1");
  report.mutable_dataset()->set_number_of_samples(samples);
  return report;
}

}  // namespace nereid::testing
