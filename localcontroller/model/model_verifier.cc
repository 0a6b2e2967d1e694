#include "localcontroller/model/model_verifier.h"

#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/s3/s3_url.h"
#include "common/strings/absl_compat.h"
#include "localcontroller/dataset/errors.h"
#include "localcontroller/dataset/host_root.h"
#include "localcontroller/dataset/s3_source.h"
#include "localcontroller/dataset/sample_counter.h"

namespace nereid::lc::model {
namespace {

using dataset::DatasetError;
using dataset::Reason;
using dataset::ReasonOf;

// Incremental SHA-256 over OpenSSL's EVP interface (the one API that is not deprecated in 3.x).
class Sha256 {
 public:
  Sha256() : ctx_(EVP_MD_CTX_new(), &EVP_MD_CTX_free) {
    ok_ = ctx_ != nullptr && EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr) == 1;
  }
  void Update(const void* data, size_t size) {
    if (ok_ && size > 0) ok_ = EVP_DigestUpdate(ctx_.get(), data, size) == 1;
  }
  // Empty when OpenSSL failed (out of memory): reported as ReadError by the caller.
  std::string FinishHex() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    if (!ok_ || EVP_DigestFinal_ex(ctx_.get(), digest, &length) != 1) return "";
    static constexpr char kHex[] = "0123456789abcdef";
    std::string hex;
    hex.reserve(length * 2);
    for (unsigned int i = 0; i < length; ++i) {
      hex.push_back(kHex[digest[i] >> 4]);
      hex.push_back(kHex[digest[i] & 0xf]);
    }
    return hex;
  }

 private:
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx_;
  bool ok_ = false;
};

int64_t MtimeNs(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

void SetError(Check& check, const absl::Status& status) {
  check.reason = ReasonOf(status);
  check.message = ToStd(status.message());
}

bool Transient(const absl::Status& status) {
  const std::string reason = ReasonOf(status);
  return reason == "FileChanged" || reason == "Cancelled";
}

// Compares the computed digest with the expected one and fills the verdict.
void Compare(const ModelSpec& spec, const std::string& expected, Check& check) {
  if (check.sha256 == expected) {
    check.verified = true;
    return;
  }
  check.reason = kReasonChecksumMismatch;
  check.message = absl::StrCat("model ", spec.key, ": sha256 of ", check.fingerprint->source, " is ",
                               check.sha256, ", expected ", expected);
}

// Finishes a streamed digest over `bytes` bytes into `check`; false (ReadError set) when OpenSSL
// failed.
bool FinishDigest(const ModelSpec& spec, Sha256& sha, uint64_t bytes, Check& check) {
  check.sha256 = sha.FinishHex();
  check.size = bytes;
  check.bytes_hashed = bytes;
  if (!check.sha256.empty()) return true;
  check.reason = "ReadError";
  check.message = absl::StrCat("model ", spec.key, ": SHA-256 computation failed");
  return false;
}

}  // namespace

std::string Sha256Hex(std::string_view data) {
  Sha256 sha;
  sha.Update(data.data(), data.size());
  return sha.FinishHex();
}

bool IsSha256Hex(std::string_view text) {
  if (text.size() != 64) return false;
  for (char c : text) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

std::string NormalizeSha256(std::string_view text) {
  return absl::AsciiStrToLower(absl::StripAsciiWhitespace(ToAbsl(text)));
}

absl::StatusOr<Check> ModelVerifier::Verify(const ModelSpec& spec, const Check* previous,
                                            const std::atomic<bool>* cancel) const {
  Check check;
  if (!spec.sha256.empty() && !IsSha256Hex(NormalizeSha256(spec.sha256))) {
    check.reason = kReasonInvalidSha256;
    check.message = absl::StrCat("model ", spec.key, ": sha256 \"", spec.sha256,
                                 "\" is not 64 hexadecimal digits");
    return check;
  }
  if (spec.url.empty()) {
    check.reason = "InvalidURL";
    check.message = absl::StrCat("model ", spec.key, ": url is empty");
    return check;
  }
  std::string path;
  switch (dataset::ClassifyUrl(spec.url, &path)) {
    case dataset::UrlKind::kLocal:
      return VerifyLocal(spec, path, previous, cancel);
    case dataset::UrlKind::kHttp:
      return VerifyHttp(spec, previous, cancel);
    case dataset::UrlKind::kS3:
      if (options_.s3 != nullptr) return VerifyS3(spec, previous, cancel);
      break;
    case dataset::UrlKind::kUnsupported:
      break;
  }
  const std::string shown = dataset::RedactUrl(spec.url);
  check.reason = "Unsupported";
  check.message =
      absl::StrCat("model ", spec.key, ": url scheme \"", shown.substr(0, shown.find("://")),
                   "\" is not supported (", shown, "); use a host path, http(s) or s3");
  return check;
}

absl::StatusOr<Check> ModelVerifier::VerifyLocal(const ModelSpec& spec, const std::string& path,
                                                 const Check* previous,
                                                 const std::atomic<bool>* cancel) const {
  Check check;
  absl::StatusOr<dataset::HostRoot> root =
      dataset::HostRoot::Open(options_.host_root, options_.data_roots);
  if (!root.ok()) {
    SetError(check, root.status());
    return check;
  }
  absl::StatusOr<dataset::HostRoot::Entry> entry = root->Resolve(path);
  if (!entry.ok()) {
    if (Transient(entry.status())) return entry.status();
    SetError(check, entry.status());
    return check;
  }
  check.present = true;
  const bool is_file = S_ISREG(entry->st.st_mode);
  if (is_file) check.size = static_cast<uint64_t>(entry->st.st_size);
  if (spec.sha256.empty()) return check;  // presence only (documented in the header)
  if (!is_file) {
    check.reason = "NotAFile";
    check.message = absl::StrCat("model ", spec.key, ": ", entry->host_path,
                                 " is not a regular file; a sha256 can only be verified for a file");
    return check;
  }

  Fingerprint fingerprint;
  fingerprint.source = entry->host_path;
  fingerprint.dev = entry->st.st_dev;
  fingerprint.ino = entry->st.st_ino;
  fingerprint.size = static_cast<uint64_t>(entry->st.st_size);
  fingerprint.mtime_ns = MtimeNs(entry->st);
  const std::string expected = NormalizeSha256(spec.sha256);
  if (previous != nullptr && previous->fingerprint == fingerprint && !previous->sha256.empty()) {
    check.sha256 = previous->sha256;
    check.fingerprint = fingerprint;
    Compare(spec, expected, check);
    return check;
  }

  absl::StatusOr<UniqueFd> fd = root->OpenFile(*entry);
  if (!fd.ok()) {
    if (Transient(fd.status())) return fd.status();
    SetError(check, fd.status());
    return check;
  }
  Sha256 sha;
  std::vector<char> buffer(std::max<size_t>(options_.read_chunk_bytes, 4096));
  uint64_t total = 0;
  while (true) {
    if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) {
      return DatasetError(Reason::kCancelled, absl::StrCat("model ", spec.key, ": check cancelled"));
    }
    const ssize_t n = ::read(fd->get(), buffer.data(), buffer.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      check.reason = "ReadError";
      check.message = absl::StrCat("model ", spec.key, ": reading ", entry->host_path, ": ",
                                   std::strerror(err));
      return check;
    }
    if (n == 0) break;
    sha.Update(buffer.data(), static_cast<size_t>(n));
    total += static_cast<uint64_t>(n);
  }
  struct stat after = {};
  if (::fstat(fd->get(), &after) != 0 || static_cast<uint64_t>(after.st_size) != fingerprint.size ||
      MtimeNs(after) != fingerprint.mtime_ns || total != fingerprint.size) {
    return DatasetError(Reason::kFileChanged,
                        absl::StrCat("model ", spec.key, ": ", entry->host_path,
                                     " changed while it was hashed"));
  }
  if (!FinishDigest(spec, sha, total, check)) return check;
  check.fingerprint = fingerprint;
  Compare(spec, expected, check);
  return check;
}

absl::StatusOr<Check> ModelVerifier::VerifyHttp(const ModelSpec& spec, const Check* previous,
                                                const std::atomic<bool>* cancel) const {
  Check check;
  // Nothing to compare: do not download a possibly huge file for nothing (see header).
  if (spec.sha256.empty()) return check;

  const std::string shown = dataset::RedactUrl(spec.url);
  std::string etag;
  std::string last_modified;
  const bool have_previous = previous != nullptr && previous->fingerprint.has_value() &&
                             previous->fingerprint->source == shown && !previous->sha256.empty();
  if (have_previous) {
    etag = previous->fingerprint->etag;
    last_modified = previous->fingerprint->last_modified;
  }
  Sha256 sha;
  absl::StatusOr<dataset::HttpFetch> fetch = dataset::FetchHttp(
      spec.url, options_.http, etag, last_modified, options_.clock, cancel,
      [&sha](const uint8_t* data, size_t size) { sha.Update(data, size); });
  if (!fetch.ok()) {
    if (Transient(fetch.status())) return fetch.status();
    SetError(check, fetch.status());
    return check;
  }
  check.present = true;
  const std::string expected = NormalizeSha256(spec.sha256);
  if (fetch->not_modified && !have_previous) {
    check.reason = "DownloadFailed";
    check.message = absl::StrCat("model ", spec.key, ": ", shown,
                                 " answered 304 Not Modified to an unconditional request");
    return check;
  }
  if (fetch->not_modified) {
    check.sha256 = previous->sha256;
    check.size = previous->size;
    check.fingerprint = previous->fingerprint;
    Compare(spec, expected, check);
    return check;
  }
  if (!FinishDigest(spec, sha, fetch->bytes, check)) return check;
  Fingerprint fingerprint;
  fingerprint.source = shown;
  fingerprint.size = fetch->bytes;
  fingerprint.etag = fetch->etag;
  fingerprint.last_modified = fetch->last_modified;
  check.fingerprint = fingerprint;
  Compare(spec, expected, check);
  return check;
}

absl::StatusOr<Check> ModelVerifier::VerifyS3(const ModelSpec& spec, const Check* previous,
                                              const std::atomic<bool>* cancel) const {
  Check check;
  absl::StatusOr<nereid::s3::Location> location = nereid::s3::ParseS3Url(spec.url);
  if (!location.ok()) {
    check.reason = "InvalidURL";
    check.message = absl::StrCat("model ", spec.key, ": ", location.status().message());
    return check;
  }
  const std::string source = location->Url();
  if (!spec.s3_credential.has_value()) {
    SetError(check, DatasetError(Reason::kCredentialMissing,
                                 absl::StrCat("model ", spec.key, ": ", source,
                                              " needs S3 credentials: set spec.credentialName")));
    return check;
  }
  const s3::Credential& credential = *spec.s3_credential;
  absl::StatusOr<s3::ObjectInfo> head = options_.s3->Head(credential, *location);
  if (!head.ok()) {
    SetError(check, dataset::S3DatasetError(head.status()));
    return check;
  }
  check.present = true;
  check.size = head->size;
  if (spec.sha256.empty()) return check;  // existence and size only (documented in the header)

  const std::string expected = NormalizeSha256(spec.sha256);
  Fingerprint fingerprint;
  fingerprint.source = source;
  fingerprint.size = head->size;
  fingerprint.etag = head->etag;
  if (previous != nullptr && previous->fingerprint == fingerprint && !previous->sha256.empty() &&
      !head->etag.empty()) {
    check.sha256 = previous->sha256;
    check.fingerprint = fingerprint;
    Compare(spec, expected, check);
    return check;
  }
  Sha256 sha;
  absl::StatusOr<s3::ObjectInfo> got =
      options_.s3->Get(credential, *location, cancel,
                       [&sha](const uint8_t* data, size_t size) { sha.Update(data, size); });
  if (!got.ok()) {
    const absl::Status error = dataset::S3DatasetError(got.status());
    if (Transient(error)) return error;
    SetError(check, error);
    return check;
  }
  if (!FinishDigest(spec, sha, got->size, check)) return check;
  // The GET's own ETag: the digest belongs to exactly the bytes read, even if the object was
  // replaced between the HEAD and the GET.
  fingerprint.size = got->size;
  fingerprint.etag = got->etag;
  check.fingerprint = fingerprint;
  Compare(spec, expected, check);
  return check;
}

}  // namespace nereid::lc::model
