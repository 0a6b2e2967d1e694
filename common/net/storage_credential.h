#pragma once

// S3 credentials on the edge protocol (resources.proto S3Credential) <-> the typed credential of
// common/s3. The GM fills DatasetSpec.s3_credential / ModelSpec.s3_credential with
// SetS3Credential for an s3:// url only; the LC reads them back with S3CredentialOf, which ignores
// a credential sent with any other url, so it can never reach an http server.

#include <optional>
#include <string_view>

#include "common/s3/credential.h"
#include "common/s3/s3_url.h"
#include "nereid/edge/v1/resources.pb.h"

namespace nereid::net {

inline void SetS3Credential(const s3::Credential& credential, edge::v1::S3Credential* out) {
  out->set_endpoint(credential.endpoint);
  out->set_use_https(credential.use_https);
  out->set_access_key_id(credential.access_key_id);
  out->set_secret_access_key(credential.secret_access_key);
}

inline std::optional<s3::Credential> S3CredentialOf(std::string_view url, bool present,
                                                    const edge::v1::S3Credential& credential) {
  if (!present || !s3::IsS3Url(url)) return std::nullopt;
  return s3::Credential{credential.endpoint(), credential.use_https(),
                        credential.access_key_id(), credential.secret_access_key()};
}

}  // namespace nereid::net
