#include "common/s3/s3_url.h"

#include <catch2/catch.hpp>

namespace nereid::s3 {
namespace {

TEST_CASE("ParseS3Url takes the bucket from the host and the key from the path, as Sedna") {
  auto parsed = ParseS3Url("s3://kubeedge/model/m.pb");
  REQUIRE(parsed.ok());
  CHECK(parsed->bucket == "kubeedge");
  CHECK(parsed->key == "model/m.pb");
  CHECK(parsed->Url() == "s3://kubeedge/model/m.pb");

  auto upper = ParseS3Url("S3://b/dir/");
  REQUIRE(upper.ok());
  CHECK(upper->key == "dir/");
  auto bucket_only = ParseS3Url("s3://bucket");
  REQUIRE(bucket_only.ok());
  CHECK(bucket_only->key.empty());
}

TEST_CASE("ParseS3Url refuses what cannot be an s3 object") {
  CHECK_FALSE(ParseS3Url("http://b/k").ok());
  CHECK_FALSE(ParseS3Url("s3:///k").ok());
  CHECK_FALSE(ParseS3Url("s3://bad bucket/k").ok());
  auto with_userinfo = ParseS3Url("s3://AKIA:SECRETVALUE@bucket/k");
  REQUIRE_FALSE(with_userinfo.ok());
  // The refusal never echoes what looked like credentials.
  CHECK(std::string(with_userinfo.status().message()).find("SECRETVALUE") == std::string::npos);
  CHECK(IsS3Url("s3://b/k"));
  CHECK_FALSE(IsS3Url("/s3/b"));
}

TEST_CASE("ObjectUrl: path style for on-premise endpoints, virtual host for AWS") {
  const Location location{"data", "train/a b+c.txt"};
  CHECK(ObjectUrl(false, "127.0.0.1:9000", location, Addressing::kAuto) ==
        "http://127.0.0.1:9000/data/train/a%20b%2Bc.txt");
  CHECK(ObjectUrl(true, "s3.eu-west-1.amazonaws.com", location, Addressing::kAuto) ==
        "https://data.s3.eu-west-1.amazonaws.com/train/a%20b%2Bc.txt");
  CHECK(ObjectUrl(true, "minio.local:9000", location, Addressing::kVirtualHost) ==
        "https://data.minio.local:9000/train/a%20b%2Bc.txt");
  CHECK(ObjectUrl(true, "s3.amazonaws.com", location, Addressing::kPath) ==
        "https://s3.amazonaws.com/data/train/a%20b%2Bc.txt");
  // A bucket that is not one DNS label stays path-style even when virtual-host is asked for.
  CHECK(ResolveAddressing(Addressing::kVirtualHost, "s3.amazonaws.com", "my.bucket") ==
        Addressing::kPath);
  CHECK(ResolveAddressing(Addressing::kAuto, "[::1]:9000", "data") == Addressing::kPath);
}

TEST_CASE("ParseAddressing") {
  CHECK(*ParseAddressing("path") == Addressing::kPath);
  CHECK(*ParseAddressing("Virtual") == Addressing::kVirtualHost);
  CHECK(*ParseAddressing("auto") == Addressing::kAuto);
  CHECK_FALSE(ParseAddressing("dns").ok());
}

TEST_CASE("UriEncode keeps unreserved characters and, on request, slashes") {
  CHECK(UriEncode("a/b~c_d-e.f", true) == "a/b~c_d-e.f");
  CHECK(UriEncode("a/b", false) == "a%2Fb");
  CHECK(UriEncode("\xc3\xa9=", true) == "%C3%A9%3D");
}

}  // namespace
}  // namespace nereid::s3
