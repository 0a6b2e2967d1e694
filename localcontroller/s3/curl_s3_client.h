#pragma once

// S3Client over libcurl: requests are signed by libcurl's AWS Signature V4 (CURLOPT_AWS_SIGV4,
// "aws:amz:<region>:s3" with x-amz-content-sha256: UNSIGNED-PAYLOAD, which every S3 implementation
// accepts), not by code of ours. https verifies the server certificate and host name (system CAs,
// or `ca_file`); there is no switch to turn verification off.
//
// Each call is one request, retried on connection errors, timeouts, 5xx and 429 with exponential
// backoff and jitter, unless body bytes already went to the caller's sink (a counter cannot be
// rewound). Thread-safe: no state is shared between calls except the transfer counters.

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "common/s3/s3_url.h"
#include "common/time/clock.h"
#include "localcontroller/s3/s3_client.h"

namespace nereid::lc::s3 {

struct CurlS3Options {
  ::nereid::s3::Addressing addressing = ::nereid::s3::Addressing::kAuto;
  std::string region = "us-east-1";
  std::string ca_file;                               // https: CA bundle; empty = system default
  absl::Duration connect_timeout = absl::Seconds(10);
  absl::Duration read_timeout = absl::Seconds(30);   // no byte for this long: DeadlineExceeded
  absl::Duration total_timeout = absl::Minutes(10);  // one request, body included
  uint64_t max_object_bytes = uint64_t{4} << 30;     // GET bodies: ResourceExhausted beyond
  uint64_t max_document_bytes = 16 << 20;            // list/error documents held in memory
  int list_page_size = 0;                            // ListObjectsV2 max-keys; 0 = server's (1000)
  int max_attempts = 4;                              // 1 = no retries
  absl::Duration initial_backoff = absl::Milliseconds(200);
  absl::Duration max_backoff = absl::Seconds(5);
  // "host:port:address" entries pinned in libcurl's resolver (CURLOPT_RESOLVE): for endpoints
  // without DNS, and for tests of virtual-host addressing on loopback.
  std::vector<std::string> resolve;
  Clock* clock = Clock::Real();  // backoff waits
};

// What went over the wire, headers included (for the cost of polling an unchanged object).
struct TransferStats {
  uint64_t requests = 0;
  uint64_t bytes_received = 0;
  uint64_t bytes_sent = 0;
};

class CurlS3Client final : public S3Client {
 public:
  explicit CurlS3Client(CurlS3Options options);

  absl::StatusOr<ObjectInfo> Head(const Credential& credential,
                                  const Location& location) const override;
  absl::StatusOr<ObjectInfo> Get(const Credential& credential, const Location& location,
                                 const std::atomic<bool>* cancel, BodySink sink) const override;
  absl::StatusOr<ListPage> List(const Credential& credential, const Location& prefix,
                                std::string_view continuation_token,
                                const std::atomic<bool>* cancel) const override;
  absl::Status Put(const Credential& credential, const Location& location,
                   std::string_view body) const override;
  absl::Status Delete(const Credential& credential, const Location& location) const override;

  TransferStats stats() const;
  const CurlS3Options& options() const { return options_; }

 private:
  struct Counters {
    std::atomic<uint64_t> requests{0};
    std::atomic<uint64_t> bytes_received{0};
    std::atomic<uint64_t> bytes_sent{0};
  };

  const CurlS3Options options_;
  mutable Counters counters_;
};

}  // namespace nereid::lc::s3
