#pragma once

// A scripted edge node for hub tests: a raw Sync stream over mTLS with a given node certificate,
// a reader thread, and bounded waits for the next downstream message.

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/channel.h"
#include "grpcpp/client_context.h"
#include "grpcpp/support/status.h"
#include "nereid/edge/v1/sync.grpc.pb.h"
#include "tests/common/net/test_certs.h"

namespace nereid::testing {

class TestNode {
 public:
  // Opens a stream to 127.0.0.1:port presenting `cert_node`'s certificate from `certs`.
  TestNode(int port, const CertSet& certs, const std::string& cert_node);
  // Opens a stream on `channel` (several nodes may share one), with extra request metadata.
  explicit TestNode(std::shared_ptr<grpc::Channel> channel,
                    const std::vector<std::pair<std::string, std::string>>& metadata = {});
  // A channel to 127.0.0.1:port presenting `tls`'s certificate.
  static std::shared_ptr<grpc::Channel> Channel(int port, const net::TlsOptions& tls);
  ~TestNode();

  void Send(const edge::v1::SyncRequest& request);
  void Hello(const std::string& claimed_node,
             const std::vector<edge::v1::InventoryItem>& inventory = {});
  void Ack(const edge::v1::Change& change);
  void Nack(const edge::v1::Change& change, const std::string& message);
  void Report(const edge::v1::StatusReport& report);

  // The next downstream message, or nullopt when the stream ended or `timeout` passed.
  std::optional<edge::v1::SyncResponse> Next(absl::Duration timeout = absl::Seconds(10));
  // Next() that must be a Change / ReportAck (REQUIREd).
  edge::v1::Change NextChange();
  edge::v1::ReportAck NextReportAck();

  // Whether the server ended the stream (its status is then AwaitEnd's at once).
  bool Ended();
  // Waits for the server to end the stream and returns its status (cancels after `timeout`).
  grpc::Status AwaitEnd(absl::Duration timeout = absl::Seconds(10));
  // A trailer of the ended stream ("" when absent); after AwaitEnd.
  std::string Trailer(const std::string& key) const;
  // Cancels the stream (simulates the node going away).
  void Cancel();

 private:
  void ReadLoop();

  grpc::ClientContext context_;
  std::unique_ptr<edge::v1::EdgeSync::Stub> stub_;
  std::unique_ptr<grpc::ClientReaderWriter<edge::v1::SyncRequest, edge::v1::SyncResponse>> stream_;
  std::thread reader_;
  absl::Mutex mu_;
  std::deque<edge::v1::SyncResponse> inbox_ ABSL_GUARDED_BY(mu_);
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<grpc::Status> status_;
};

edge::v1::InventoryItem Item(const std::string& kind, const std::string& name,
                             const std::string& version, const std::string& uid = "");
edge::v1::Resource DatasetResource(const std::string& name, const std::string& version,
                                   const std::string& node, const std::string& uid = "");
edge::v1::StatusReport DatasetReport(uint64_t seq, const std::string& name, int64_t samples);

}  // namespace nereid::testing
