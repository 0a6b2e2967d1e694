#pragma once

// A real S3 server for tests (tests/support/s3rver): s3rver behind a SigV4-checking wrapper, on
// 127.0.0.1 with a free port and a fresh data directory; stopped by the destructor.
//
//   auto s3 = S3Server::Start({.data_dir = dir.Path("s3"), .buckets = {"data"}});
//   REQUIRE(s3.ok());
//   (*s3)->endpoint();  // "127.0.0.1:41237" (the Secret's s3-endpoint)
//
// The account is S3Server::kAccessKeyId / kSecretAccessKey. The install fixture (CTest
// `s3rver_install`) must have run: tests that use this list FIXTURES_REQUIRED s3rver.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tests/support/subprocess.h"

namespace nereid::testing {

class S3Server {
 public:
  static constexpr char kAccessKeyId[] = "S3RVER";
  static constexpr char kSecretAccessKey[] = "S3RVER";

  struct Options {
    std::string data_dir;              // created if missing
    std::vector<std::string> buckets = {};  // created at start
    // Virtual-host requests are recognised for <bucket>.s3.<service_endpoint>.
    std::string service_endpoint = "nereid.test";
    std::string tls_key = "";  // both set: https
    std::string tls_cert = "";
  };

  static absl::StatusOr<std::unique_ptr<S3Server>> Start(Options options);

  int port() const { return port_; }
  std::string endpoint() const { return "127.0.0.1:" + std::to_string(port_); }
  Subprocess& process() { return *process_; }

 private:
  std::unique_ptr<Subprocess> process_;
  int port_ = 0;
};

// Where install.sh put s3rver (the build tree), from the NEREID_S3RVER_DIR definition.
std::string S3rverDir();

}  // namespace nereid::testing
