#pragma once

// S3 credentials in Sedna's Secret format. A Secret in the object's namespace, named by the
// object's `credentialName`, holds:
//   metadata.annotations  s3-endpoint   host[:port], no scheme (required)
//                         s3-usehttps   "0" = plain http; anything else, or absent, = https
//   data / stringData     ACCESS_KEY_ID, SECRET_ACCESS_KEY
// There is no session token and no region (SigV4 signs for us-east-1, which MinIO, Ceph RGW and
// s3rver accept; AWS redirects other regions).
//
// Unlike Sedna, a Secret that lacks a field is an error naming the field (Sedna silently injects
// nothing, or crashes), and no function here ever puts a key value into a message.

#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "common/kube/object.h"

namespace nereid::s3 {

inline constexpr std::string_view kAnnotationEndpoint = "s3-endpoint";
inline constexpr std::string_view kAnnotationUseHttps = "s3-usehttps";
inline constexpr std::string_view kKeyAccessKeyId = "ACCESS_KEY_ID";
inline constexpr std::string_view kKeySecretAccessKey = "SECRET_ACCESS_KEY";

struct Credential {
  std::string endpoint;  // host[:port]
  bool use_https = true;
  std::string access_key_id;
  std::string secret_access_key;

  // "https://host[:port]" or "http://host[:port]": Sedna's S3_ENDPOINT_URL.
  std::string EndpointUrl() const;
  friend bool operator==(const Credential&, const Credential&) = default;
};

// From the Secret's annotations and its decoded data (stringData merged over data by the caller).
// InvalidArgument naming the missing or malformed field (never its value).
absl::StatusOr<Credential> CredentialFromSecretFields(
    const std::map<std::string, std::string>& annotations,
    const std::map<std::string, std::string>& data);

// From a Secret object as the API server returns it (data base64-encoded; stringData, which only
// appears in manifests, is accepted too and wins, as the API server would merge it).
absl::StatusOr<Credential> CredentialFromSecret(const kube::Json& secret);

// Validates `endpoint` as host[:port] (no scheme, path, userinfo or whitespace).
absl::Status ValidateEndpoint(std::string_view endpoint);

}  // namespace nereid::s3
