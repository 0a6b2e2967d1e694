// CurlS3Client against a real S3 server: s3rver on loopback behind a wrapper that verifies every
// SigV4 signature (tests/support/s3rver), so these requests are signed correctly, not only sent.

#include "localcontroller/s3/curl_s3_client.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <filesystem>
#include <string>

#include "tests/common/net/test_certs.h"
#include "tests/support/s3_server.h"

namespace nereid::lc::s3 {
namespace {

using ::nereid::s3::Addressing;
using ::nereid::testing::S3Server;
using ::nereid::testing::TestCerts;

struct Fixture {
  Fixture() {
    dir = std::filesystem::temp_directory_path() /
          ("nereid-s3-client-" + std::to_string(::getpid()) + "-" + std::to_string(++serial));
    S3Server::Options options;
    options.data_dir = dir.string() + "/data";
    options.buckets = {"data"};
    auto started = S3Server::Start(options);
    INFO(started.status());
    REQUIRE(started.ok());
    server = std::move(*started);
    credential = Credential{server->endpoint(), false, S3Server::kAccessKeyId,
                            S3Server::kSecretAccessKey};
  }
  ~Fixture() {
    server.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  CurlS3Options Options() const {
    CurlS3Options options;
    options.max_attempts = 2;
    options.initial_backoff = absl::Milliseconds(10);
    return options;
  }
  std::string GetAll(const CurlS3Client& client, const Location& location) {
    std::string body;
    auto got = client.Get(credential, location, nullptr, [&](const uint8_t* data, size_t size) {
      body.append(reinterpret_cast<const char*>(data), size);
    });
    INFO(got.status());
    REQUIRE(got.ok());
    CHECK(got->size == body.size());
    return body;
  }

  static inline int serial = 0;
  std::filesystem::path dir;
  std::unique_ptr<S3Server> server;
  Credential credential;
};

TEST_CASE_METHOD(Fixture, "put, head, streamed get, list and delete with SigV4") {
  CurlS3Client client(Options());
  const Location object{"data", "sets/train 1.txt"};
  REQUIRE(client.Put(credential, object, "a\nb\nc\n").ok());

  auto head = client.Head(credential, object);
  INFO(head.status());
  REQUIRE(head.ok());
  CHECK(head->size == 6);
  CHECK_FALSE(head->etag.empty());
  CHECK(GetAll(client, object) == "a\nb\nc\n");

  REQUIRE(client.Put(credential, {"data", "sets/other.xml"}, "<x/>").ok());
  REQUIRE(client.Put(credential, {"data", "elsewhere.txt"}, "z").ok());
  auto page = client.List(credential, {"data", "sets/"}, "", nullptr);
  INFO(page.status());
  REQUIRE(page.ok());
  REQUIRE(page->objects.size() == 2);
  CHECK(page->objects[0].key == "sets/other.xml");
  CHECK(page->objects[1] == ListedObject{"sets/train 1.txt", 6, head->etag});

  REQUIRE(client.Delete(credential, object).ok());
  auto gone = client.Head(credential, object);
  CHECK(absl::IsNotFound(gone.status()));
  const TransferStats stats = client.stats();
  CHECK(stats.requests >= 8);
  CHECK(stats.bytes_received > 0);
}

TEST_CASE_METHOD(Fixture, "ListObjectsV2 pages are followed with the continuation token") {
  CurlS3Options options = Options();
  options.list_page_size = 2;
  CurlS3Client client(options);
  for (int i = 0; i < 5; ++i) {
    REQUIRE(client.Put(credential, {"data", "p/" + std::to_string(i)}, "x").ok());
  }
  std::string token;
  size_t seen = 0;
  int pages = 0;
  do {
    auto page = client.List(credential, {"data", "p/"}, token, nullptr);
    INFO(page.status());
    REQUIRE(page.ok());
    seen += page->objects.size();
    token = page->truncated ? page->next_continuation_token : "";
    REQUIRE(++pages <= 5);
  } while (!token.empty());
  CHECK(seen == 5);
  CHECK(pages == 3);
}

TEST_CASE_METHOD(Fixture, "virtual-host addressing reaches the same bucket") {
  CurlS3Options options = Options();
  options.addressing = Addressing::kVirtualHost;
  const std::string port = std::to_string(server->port());
  options.resolve = {"data.s3.nereid.test:" + port + ":127.0.0.1",
                     "s3.nereid.test:" + port + ":127.0.0.1"};
  CurlS3Client client(options);
  Credential vhost = credential;
  vhost.endpoint = "s3.nereid.test:" + port;
  REQUIRE(client.Put(vhost, {"data", "v.txt"}, "vhost\n").ok());
  // Read back path-style: the object really landed in bucket "data".
  CurlS3Client path_style(Options());
  CHECK(GetAll(path_style, {"data", "v.txt"}) == "vhost\n");
}

TEST_CASE_METHOD(Fixture, "store errors keep their meaning and never show the secret") {
  CurlS3Client client(Options());
  REQUIRE(client.Put(credential, {"data", "k.txt"}, "1\n").ok());

  Credential wrong = credential;
  wrong.secret_access_key = "not-the-secret-value";
  auto denied = client.Head(wrong, {"data", "k.txt"});
  CHECK(denied.status().code() == absl::StatusCode::kPermissionDenied);
  auto denied_get =
      client.Get(wrong, {"data", "k.txt"}, nullptr, [](const uint8_t*, size_t) {});
  CHECK(denied_get.status().code() == absl::StatusCode::kPermissionDenied);
  CHECK(std::string(denied_get.status().message()).find("SignatureDoesNotMatch") !=
        std::string::npos);
  CHECK(std::string(denied_get.status().message()).find("not-the-secret-value") ==
        std::string::npos);

  Credential unknown = credential;
  unknown.access_key_id = "NOBODY";
  CHECK(client.Head(unknown, {"data", "k.txt"}).status().code() ==
        absl::StatusCode::kPermissionDenied);

  auto no_bucket =
      client.Get(credential, {"nope", "k.txt"}, nullptr, [](const uint8_t*, size_t) {});
  CHECK(absl::IsNotFound(no_bucket.status()));
  CHECK(std::string(no_bucket.status().message()).find("no such bucket") != std::string::npos);
  auto no_key = client.Get(credential, {"data", "nope"}, nullptr, [](const uint8_t*, size_t) {});
  CHECK(absl::IsNotFound(no_key.status()));
  CHECK(std::string(no_key.status().message()).find("NoSuchKey") != std::string::npos);

  CurlS3Options small = Options();
  small.max_object_bytes = 1;
  CHECK(CurlS3Client(small)
            .Get(credential, {"data", "k.txt"}, nullptr, [](const uint8_t*, size_t) {})
            .status()
            .code() == absl::StatusCode::kResourceExhausted);

  std::atomic<bool> cancel{true};
  CHECK(client.Get(credential, {"data", "k.txt"}, &cancel, [](const uint8_t*, size_t) {})
            .status()
            .code() == absl::StatusCode::kCancelled);
}

TEST_CASE_METHOD(Fixture, "an endpoint that is down is Unavailable after the retries") {
  const int port = server->port();
  server.reset();  // stopped: nothing listens on the port any more
  CurlS3Options options = Options();
  options.max_attempts = 3;
  CurlS3Client client(options);
  Credential down = credential;
  down.endpoint = "127.0.0.1:" + std::to_string(port);
  auto result = client.Head(down, {"data", "k.txt"});
  CHECK(result.status().code() == absl::StatusCode::kUnavailable);
  CHECK(std::string(result.status().message()).find("unreachable") != std::string::npos);
  CHECK(client.stats().requests == 3);
}

TEST_CASE("https with a custom CA; certificate verification cannot be skipped") {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("nereid-s3-tls-" + std::to_string(::getpid()));
  auto started = S3Server::Start({.data_dir = dir.string(),
                                  .buckets = {"data"},
                                  .tls_key = TestCerts().gm_key,
                                  .tls_cert = TestCerts().gm_cert});
  INFO(started.status());
  REQUIRE(started.ok());
  const Credential credential{(*started)->endpoint(), true, S3Server::kAccessKeyId,
                              S3Server::kSecretAccessKey};
  CurlS3Options options;
  options.max_attempts = 1;
  options.ca_file = TestCerts().ca;
  CurlS3Client trusted(options);
  CHECK(trusted.Put(credential, {"data", "t.txt"}, "tls\n").ok());
  CHECK(trusted.Head(credential, {"data", "t.txt"})->size == 4);

  options.ca_file.clear();  // the system CAs do not know the test CA
  auto untrusted = CurlS3Client(options).Head(credential, {"data", "t.txt"});
  CHECK(untrusted.status().code() == absl::StatusCode::kUnavailable);
  CHECK(std::string(untrusted.status().message()).find("TLS") != std::string::npos);
  started->reset();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

}  // namespace
}  // namespace nereid::lc::s3
