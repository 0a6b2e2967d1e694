#pragma once

// Checks one Model's file (its integrity is its SHA-256, Model.spec.sha256). Stateless and
// thread-compatible: the caller keeps the previous Check and hands it back so an unchanged file is
// not read again.
//
// What is checked, by url and spec.sha256:
//   host path (/abs, rel, file:///abs), resolved under the host root and confined to it exactly as
//   dataset paths are (localcontroller/dataset/host_root.h):
//     sha256 set     the file is streamed through SHA-256 (never held in memory) and compared:
//                    verified, or ChecksumMismatch with the digest found. Skipped (the previous
//                    digest reused) while device, inode, size and mtime are unchanged.
//     sha256 empty   presence only: the path must exist (file or directory); nothing is hashed,
//                    so a multi-GiB model costs nothing to watch. Reported as not verified, no
//                    error.
//   http(s)://
//     sha256 set     the body is streamed through SHA-256 (size cap and timeouts of HttpOptions);
//                    a conditional GET with the last ETag/Last-Modified turns an unchanged remote
//                    file into a 304 and the previous digest is reused.
//     sha256 empty   not fetched at all (it may be huge and nothing would be compared): reported
//                    as not verified, no error.
//   s3://bucket/key, with the Model's credential (none: CredentialMissing):
//     always        HEAD: the object must exist; its size is reported.
//     sha256 set    the body is streamed through SHA-256, unless the ETag and size equal those
//                   of the previous check (then its digest is reused: one HEAD, no download).
//   other schemes: Unsupported.
// A directory with a sha256 is NotAFile: a digest is defined for one file.
//
// Failures are reported, not returned: Check::reason is a machine-readable reason (the dataset
// reasons PathNotFound, PermissionDenied, PathEscapesHostRoot, NotAFile, DownloadFailed,
// DownloadTooLarge, Timeout, ReadError, Unsupported, InvalidURL, plus ChecksumMismatch and
// InvalidSha256 here). Only transient conditions come back as a non-OK status: FileChanged (the
// file changed while it was hashed: check again) and Cancelled.

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "common/time/clock.h"
#include "common/s3/credential.h"
#include "localcontroller/dataset/data_roots.h"
#include "localcontroller/dataset/http_source.h"
#include "localcontroller/s3/s3_client.h"

namespace nereid::lc::model {

inline constexpr char kReasonChecksumMismatch[] = "ChecksumMismatch";
inline constexpr char kReasonInvalidSha256[] = "InvalidSha256";

struct ModelSpec {
  std::string key;  // "namespace/name"
  std::string url;
  std::string format;
  std::string sha256;  // expected lowercase hex digest; empty = do not verify
  std::optional<nereid::s3::Credential> s3_credential = std::nullopt;  // s3:// only; never logged
  bool operator==(const ModelSpec&) const = default;
};

// What a digest was computed over, so an unchanged source is not read again.
struct Fingerprint {
  std::string source;  // canonical host path or redacted url
  uint64_t dev = 0;
  uint64_t ino = 0;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  std::string etag;           // http validators
  std::string last_modified;
  bool operator==(const Fingerprint&) const = default;
};

struct Check {
  bool verified = false;     // the digest matches spec.sha256
  bool present = false;      // the model was found (file, directory or http body)
  std::string sha256;        // the digest computed (or reused); empty when nothing was hashed
  std::optional<uint64_t> size;  // bytes of a file / http body, when known
  std::string reason;        // "" = no error (verified, or not asked to verify)
  std::string message;
  std::optional<Fingerprint> fingerprint;  // set when sha256 is the digest of that source
  uint64_t bytes_hashed = 0;  // what this check read (0 when the digest was reused)
  bool operator==(const Check&) const = default;
};

struct VerifierOptions {
  std::string host_root = "/rootfs";
  dataset::DataRoots data_roots;  // as the dataset counter's (dataset/data_roots.h)
  dataset::HttpOptions http;
  Clock* clock = Clock::Real();
  size_t read_chunk_bytes = 1 << 20;
  std::shared_ptr<const s3::S3Client> s3;  // for s3:// urls; null: they are Unsupported
};

// Lowercase hex SHA-256 of `data` (tests, and the http sink's finish).
std::string Sha256Hex(std::string_view data);
// Lowercase 64-hex-digit string (upper case accepted and folded by NormalizeSha256).
bool IsSha256Hex(std::string_view text);
std::string NormalizeSha256(std::string_view text);

class ModelVerifier {
 public:
  explicit ModelVerifier(VerifierOptions options) : options_(std::move(options)) {}

  // `previous` is the last Check of the same spec (its fingerprint lets an unchanged file be
  // skipped). Non-OK only for FileChanged/Cancelled (see above).
  absl::StatusOr<Check> Verify(const ModelSpec& spec, const Check* previous,
                               const std::atomic<bool>* cancel) const;

  const VerifierOptions& options() const { return options_; }

 private:
  absl::StatusOr<Check> VerifyLocal(const ModelSpec& spec, const std::string& path,
                                    const Check* previous, const std::atomic<bool>* cancel) const;
  absl::StatusOr<Check> VerifyHttp(const ModelSpec& spec, const Check* previous,
                                   const std::atomic<bool>* cancel) const;
  absl::StatusOr<Check> VerifyS3(const ModelSpec& spec, const Check* previous,
                                 const std::atomic<bool>* cancel) const;

  VerifierOptions options_;
};

}  // namespace nereid::lc::model
