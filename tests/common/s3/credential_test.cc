#include "common/s3/credential.h"

#include <catch2/catch.hpp>

namespace nereid::s3 {
namespace {

using Json = kube::Json;

constexpr char kSecretValue[] = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";

Json SednaSecret() {
  // As the API server returns it: data base64-encoded.
  return Json::parse(R"({
    "apiVersion": "v1", "kind": "Secret",
    "metadata": {"name": "mysecret", "namespace": "default",
                 "annotations": {"s3-endpoint": "minio.storage:9000", "s3-usehttps": "0"}},
    "type": "Opaque",
    "data": {"ACCESS_KEY_ID": "QUtJQUlPU0ZPRE5ON0VYQU1QTEU=",
             "SECRET_ACCESS_KEY": "d0phbHJYVXRuRkVNSS9LN01ERU5HL2JQeFJmaUNZRVhBTVBMRUtFWQ=="}
  })");
}

TEST_CASE("CredentialFromSecret reads Sedna's Secret format") {
  auto credential = CredentialFromSecret(SednaSecret());
  REQUIRE(credential.ok());
  CHECK(credential->endpoint == "minio.storage:9000");
  CHECK_FALSE(credential->use_https);
  CHECK(credential->access_key_id == "AKIAIOSFODNN7EXAMPLE");
  CHECK(credential->secret_access_key == kSecretValue);
  CHECK(credential->EndpointUrl() == "http://minio.storage:9000");
}

TEST_CASE("s3-usehttps: only \"0\" means http; absent means https") {
  Json secret = SednaSecret();
  secret["metadata"]["annotations"].erase("s3-usehttps");
  CHECK(CredentialFromSecret(secret)->use_https);
  secret["metadata"]["annotations"]["s3-usehttps"] = "false";
  CHECK(CredentialFromSecret(secret)->use_https);
}

TEST_CASE("stringData is accepted and wins over data") {
  Json secret = SednaSecret();
  secret["stringData"] = {{"ACCESS_KEY_ID", "from-string-data"}};
  auto credential = CredentialFromSecret(secret);
  REQUIRE(credential.ok());
  CHECK(credential->access_key_id == "from-string-data");
}

TEST_CASE("a Secret missing a field is an error naming the field, never a value") {
  Json no_endpoint = SednaSecret();
  no_endpoint["metadata"].erase("annotations");
  auto missing = CredentialFromSecret(no_endpoint);
  REQUIRE_FALSE(missing.ok());
  CHECK(std::string(missing.status().message()).find("s3-endpoint") != std::string::npos);

  Json no_key = SednaSecret();
  no_key["data"].erase("SECRET_ACCESS_KEY");
  auto no_secret = CredentialFromSecret(no_key);
  REQUIRE_FALSE(no_secret.ok());
  CHECK(std::string(no_secret.status().message()).find("SECRET_ACCESS_KEY") != std::string::npos);

  Json bad_base64 = SednaSecret();
  bad_base64["data"]["ACCESS_KEY_ID"] = "!!!";
  CHECK_FALSE(CredentialFromSecret(bad_base64).ok());

  Json with_scheme = SednaSecret();
  with_scheme["metadata"]["annotations"]["s3-endpoint"] = "http://minio:9000";
  auto scheme = CredentialFromSecret(with_scheme);
  REQUIRE_FALSE(scheme.ok());
  CHECK(std::string(scheme.status().message()).find("without a scheme") != std::string::npos);

  for (const Json& secret : {no_endpoint, no_key, bad_base64, with_scheme}) {
    const std::string message(CredentialFromSecret(secret).status().message());
    CHECK(message.find(kSecretValue) == std::string::npos);
    CHECK(message.find("AKIAIOSFODNN7EXAMPLE") == std::string::npos);
  }
}

TEST_CASE("ValidateEndpoint") {
  CHECK(ValidateEndpoint("minio:9000").ok());
  CHECK(ValidateEndpoint("s3.amazonaws.com").ok());
  CHECK(ValidateEndpoint("[::1]:9000").ok());
  CHECK_FALSE(ValidateEndpoint("").ok());
  CHECK_FALSE(ValidateEndpoint("minio:0").ok());
  CHECK_FALSE(ValidateEndpoint("minio:port").ok());
  CHECK_FALSE(ValidateEndpoint("minio:9000/path").ok());
  CHECK_FALSE(ValidateEndpoint("user@minio").ok());
}

}  // namespace
}  // namespace nereid::s3
