#include "tests/support/s3_server.h"

#include <filesystem>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace nereid::testing {

std::string S3rverDir() { return NEREID_S3RVER_DIR; }

absl::StatusOr<std::unique_ptr<S3Server>> S3Server::Start(Options options) {
  const std::string script = S3rverDir() + "/server.js";
  if (!std::filesystem::exists(S3rverDir() + "/node_modules/s3rver/package.json")) {
    return absl::FailedPreconditionError(absl::StrCat(
        "s3rver is not installed in ", S3rverDir(),
        "; run tests/support/s3rver/install.sh (the s3rver_install CTest fixture does)"));
  }
  std::error_code ec;
  std::filesystem::create_directories(options.data_dir, ec);
  Subprocess::Options process;
  // s3rver encrypts ListObjectsV2 continuation tokens with DES, which OpenSSL 3 keeps in its
  // legacy provider.
  process.argv = {"node", "--openssl-legacy-provider", script, "--dir", options.data_dir,
                  "--service-endpoint", options.service_endpoint};
  for (const std::string& bucket : options.buckets) {
    process.argv.push_back("--bucket");
    process.argv.push_back(bucket);
  }
  if (!options.tls_key.empty() && !options.tls_cert.empty()) {
    process.argv.insert(process.argv.end(),
                        {"--key", options.tls_key, "--cert", options.tls_cert});
  }
  absl::StatusOr<std::unique_ptr<Subprocess>> started = Subprocess::Start(std::move(process));
  if (!started.ok()) return started.status();
  auto server = std::unique_ptr<S3Server>(new S3Server());
  server->process_ = std::move(*started);
  absl::StatusOr<std::string> line = server->process_->ReadLine(absl::Seconds(30));
  if (!line.ok()) {
    return absl::UnavailableError(absl::StrCat("s3rver did not start: ", line.status().message()));
  }
  const size_t colon = line->rfind(':');
  if (line->find("S3 listening on ") != 0 || colon == std::string::npos ||
      !absl::SimpleAtoi(line->substr(colon + 1), &server->port_)) {
    return absl::UnavailableError(absl::StrCat("unexpected s3rver output: ", *line));
  }
  return server;
}

}  // namespace nereid::testing
