#pragma once

// The LC's view of an S3-compatible object store: what counting a dataset and verifying a model
// need (HEAD, a streamed GET, ListObjectsV2), plus PUT and DELETE for writing outputs and tests.
// An interface, so the dataset and model code is unit-tested without a server; CurlS3Client
// (curl_s3_client.h) is the real one.
//
// Errors are absl::Status with a code the callers map to their reasons:
//   NotFound            no such bucket or key (NoSuchBucket, NoSuchKey, 404)
//   PermissionDenied    403/401: AccessDenied, InvalidAccessKeyId, SignatureDoesNotMatch, ...
//   Unavailable         endpoint unreachable, TLS failure, 5xx after the retries
//   DeadlineExceeded    connect/read/overall timeout
//   ResourceExhausted   the object is over the size limit
//   Cancelled           the caller's cancel flag was set
//   FailedPrecondition  the endpoint redirects (wrong region) or answers something unusable
// Messages name the s3:// location, the endpoint and S3's error code; never a key or secret.

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "common/s3/credential.h"
#include "common/s3/s3_url.h"

namespace nereid::lc::s3 {

using ::nereid::s3::Credential;
using ::nereid::s3::Location;

struct ObjectInfo {
  uint64_t size = 0;
  std::string etag;  // as the server sent it, quotes included
  std::string last_modified;
  friend bool operator==(const ObjectInfo&, const ObjectInfo&) = default;
};

struct ListedObject {
  std::string key;
  uint64_t size = 0;
  std::string etag;
  friend bool operator==(const ListedObject&, const ListedObject&) = default;
};

struct ListPage {
  std::vector<ListedObject> objects;
  bool truncated = false;
  std::string next_continuation_token;
};

using BodySink = absl::FunctionRef<void(const uint8_t* data, size_t size)>;

class S3Client {
 public:
  virtual ~S3Client() = default;

  virtual absl::StatusOr<ObjectInfo> Head(const Credential& credential,
                                          const Location& location) const = 0;
  // Streams the object's body into `sink` (never buffered whole); the info is the GET response's,
  // so it describes exactly the bytes delivered even if the object was replaced after a HEAD.
  virtual absl::StatusOr<ObjectInfo> Get(const Credential& credential, const Location& location,
                                         const std::atomic<bool>* cancel, BodySink sink) const = 0;
  // One ListObjectsV2 page of the keys that start with location.key.
  virtual absl::StatusOr<ListPage> List(const Credential& credential, const Location& prefix,
                                        std::string_view continuation_token,
                                        const std::atomic<bool>* cancel) const = 0;
  virtual absl::Status Put(const Credential& credential, const Location& location,
                           std::string_view body) const = 0;
  virtual absl::Status Delete(const Credential& credential, const Location& location) const = 0;
};

}  // namespace nereid::lc::s3
