#pragma once

// s3:// URLs as Sedna reads them (bucket = the URL's host, key = its path without the leading '/')
// and the HTTP URL of an object at an S3 endpoint, path-style (http://host:port/bucket/key) or
// virtual-host style (http://bucket.host:port/key).

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace nereid::s3 {

inline constexpr std::string_view kScheme = "s3";

// True for "s3://..." (scheme compared case-insensitively).
bool IsS3Url(std::string_view url);

struct Location {
  std::string bucket;
  std::string key;  // may be empty (the whole bucket) or end in '/' (a prefix)

  // "s3://bucket/key".
  std::string Url() const;
  friend bool operator==(const Location&, const Location&) = default;
};

// InvalidArgument for another scheme, an empty bucket, or a bucket name S3 cannot have (outside
// [a-z0-9.-], upper case tolerated as Sedna's minio client does, 1..255 characters). Userinfo
// ("s3://user:pass@bucket") is refused: credentials come from the Secret, never the URL.
absl::StatusOr<Location> ParseS3Url(std::string_view url);

enum class Addressing {
  kAuto,         // virtual-host for *.amazonaws.com endpoints and DNS-compatible buckets, else path
  kPath,         // http(s)://endpoint/bucket/key (MinIO, Ceph RGW, s3rver, most on-premise stores)
  kVirtualHost,  // http(s)://bucket.endpoint/key
};

// "auto" | "path" | "virtual" (case-insensitive).
absl::StatusOr<Addressing> ParseAddressing(std::string_view text);

// The addressing actually used for `bucket` at `endpoint` (host[:port]): kAuto resolved, and
// kVirtualHost falling back to path-style for a bucket that cannot be a DNS label (dots, upper
// case), since its certificate or name would not match.
Addressing ResolveAddressing(Addressing requested, std::string_view endpoint,
                             std::string_view bucket);

// The request URL of `location` at `endpoint` (host[:port], no scheme). The key is URI-encoded
// (RFC 3986 unreserved characters and '/' kept), which is also the canonical form SigV4 signs.
std::string ObjectUrl(bool use_https, std::string_view endpoint, const Location& location,
                      Addressing addressing);

// RFC 3986 percent-encoding of everything but unreserved characters (and '/' when keep_slash).
std::string UriEncode(std::string_view text, bool keep_slash);

}  // namespace nereid::s3
