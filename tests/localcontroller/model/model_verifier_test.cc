#include "localcontroller/model/model_verifier.h"

#include <catch2/catch.hpp>

#include <string>

#include "tests/localcontroller/dataset/temp_dir.h"
#include "tests/localcontroller/dataset/test_http_server.h"

namespace nereid::lc::model {
namespace {

using dataset::testing::TempDir;

VerifierOptions RootedAt(const std::string& root, size_t chunk = 1 << 20) {
  VerifierOptions options;
  options.host_root = root;
  options.read_chunk_bytes = chunk;
  return options;
}
using dataset::testing::TestServer;

// SHA-256("abc"), FIPS 180-2 appendix B.1.
constexpr char kAbcSha[] = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

ModelSpec Spec(const std::string& url, const std::string& sha = "") {
  return ModelSpec{"default/m1", url, "pb", sha};
}

Check MustVerify(const ModelVerifier& verifier, const ModelSpec& spec,
                 const Check* previous = nullptr) {
  absl::StatusOr<Check> check = verifier.Verify(spec, previous, nullptr);
  INFO(check.status());
  REQUIRE(check.ok());
  return *check;
}

TEST_CASE("sha256 helpers", "[lc][model]") {
  CHECK(Sha256Hex("abc") == kAbcSha);
  CHECK(IsSha256Hex(kAbcSha));
  CHECK_FALSE(IsSha256Hex("abc"));
  CHECK_FALSE(IsSha256Hex(std::string(63, 'a') + "g"));
  CHECK(NormalizeSha256(" BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD\n") ==
        kAbcSha);
}

TEST_CASE("a local model file is verified against its sha256", "[lc][model]") {
  TempDir root;
  root.Write("models/m.pb", "abc");
  ModelVerifier verifier(RootedAt(root.path()));

  SECTION("match, also with an upper-case digest and a file:// url") {
    for (const ModelSpec& spec :
         {Spec("/models/m.pb", kAbcSha), Spec("file:///models/m.pb", NormalizeSha256(kAbcSha)),
          Spec("models/m.pb", "BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD")}) {
      Check check = MustVerify(verifier, spec);
      CHECK(check.verified);
      CHECK(check.present);
      CHECK(check.sha256 == kAbcSha);
      CHECK(check.size == 3u);
      CHECK(check.reason.empty());
      CHECK(check.bytes_hashed == 3);
      REQUIRE(check.fingerprint.has_value());
      CHECK(check.fingerprint->source == "/models/m.pb");
    }
  }
  SECTION("mismatch reports the digest found and the one expected") {
    const std::string wrong(64, '0');
    Check check = MustVerify(verifier, Spec("/models/m.pb", wrong));
    CHECK_FALSE(check.verified);
    CHECK(check.reason == kReasonChecksumMismatch);
    CHECK(check.sha256 == kAbcSha);
    CHECK_THAT(check.message, Catch::Contains(kAbcSha) && Catch::Contains(wrong) &&
                                  Catch::Contains("default/m1"));
  }
  SECTION("an unchanged file is not read again; a changed one is") {
    Check first = MustVerify(verifier, Spec("/models/m.pb", kAbcSha));
    Check second = MustVerify(verifier, Spec("/models/m.pb", kAbcSha), &first);
    CHECK(second.verified);
    CHECK(second.bytes_hashed == 0);
    CHECK(second.sha256 == kAbcSha);

    root.Append("models/m.pb", "d");
    Check third = MustVerify(verifier, Spec("/models/m.pb", kAbcSha), &second);
    CHECK_FALSE(third.verified);
    CHECK(third.reason == kReasonChecksumMismatch);
    CHECK(third.sha256 == Sha256Hex("abcd"));
    CHECK(third.bytes_hashed == 4);
  }
  SECTION("a large file is streamed in chunks") {
    std::string big(3 * (1 << 20) + 17, 'x');
    root.Write("models/big.bin", big);
    ModelVerifier small_chunks(RootedAt(root.path(), 64 << 10));
    Check check = MustVerify(small_chunks, Spec("/models/big.bin", Sha256Hex(big)));
    CHECK(check.verified);
    CHECK(check.bytes_hashed == big.size());
  }
}

TEST_CASE("local model errors are reported with a reason, never thrown", "[lc][model]") {
  TempDir root;
  root.Write("models/m.pb", "abc");
  root.Mkdir("models/saved_model");
  root.Write("models/saved_model/saved_model.pb", "x");
  ModelVerifier verifier(RootedAt(root.path()));

  Check missing = MustVerify(verifier, Spec("/models/nope.pb", kAbcSha));
  CHECK(missing.reason == "PathNotFound");
  CHECK_FALSE(missing.present);
  CHECK_FALSE(missing.verified);

  Check escape = MustVerify(verifier, Spec("/../../../etc/passwd", kAbcSha));
  CHECK(escape.reason == "PathEscapesHostRoot");

  Check dir = MustVerify(verifier, Spec("/models/saved_model", kAbcSha));
  CHECK(dir.reason == "NotAFile");
  CHECK(dir.present);

  Check bad_sha = MustVerify(verifier, Spec("/models/m.pb", "not-a-digest"));
  CHECK(bad_sha.reason == kReasonInvalidSha256);

  Check s3 = MustVerify(verifier, Spec("s3://bucket/m.pb", kAbcSha));
  CHECK(s3.reason == "Unsupported");

  Check empty = MustVerify(verifier, Spec("", kAbcSha));
  CHECK(empty.reason == "InvalidURL");
}

TEST_CASE("without a sha256 a local model is only checked for presence", "[lc][model]") {
  TempDir root;
  root.Write("models/m.pb", "abc");
  root.Mkdir("models/saved_model");
  ModelVerifier verifier(RootedAt(root.path()));

  Check file = MustVerify(verifier, Spec("/models/m.pb"));
  CHECK(file.present);
  CHECK_FALSE(file.verified);
  CHECK(file.reason.empty());
  CHECK(file.sha256.empty());
  CHECK(file.size == 3u);
  CHECK(file.bytes_hashed == 0);

  Check dir = MustVerify(verifier, Spec("/models/saved_model"));
  CHECK(dir.present);
  CHECK(dir.reason.empty());
  CHECK_FALSE(dir.size.has_value());

  Check missing = MustVerify(verifier, Spec("/models/nope"));
  CHECK(missing.reason == "PathNotFound");
}

TEST_CASE("an http model is streamed through sha256, with a conditional GET next time",
          "[lc][model][http]") {
  TestServer server;
  std::atomic<int> full_bodies{0};
  server.server().Get("/m.pb", [&](const httplib::Request& request, httplib::Response& response) {
    ++server.requests();
    response.set_header("ETag", "\"v1\"");
    if (request.get_header_value("If-None-Match") == "\"v1\"") {
      response.status = 304;
      return;
    }
    ++full_bodies;
    response.set_content("abc", "application/octet-stream");
  });
  server.server().Get("/gone", [](const httplib::Request&, httplib::Response& response) {
    response.status = 404;
  });
  ModelVerifier verifier({});

  Check first = MustVerify(verifier, Spec(server.Url("/m.pb"), kAbcSha));
  CHECK(first.verified);
  CHECK(first.sha256 == kAbcSha);
  CHECK(first.size == 3u);
  CHECK(first.bytes_hashed == 3);

  Check second = MustVerify(verifier, Spec(server.Url("/m.pb"), kAbcSha), &first);
  CHECK(second.verified);
  CHECK(second.bytes_hashed == 0);
  CHECK(full_bodies == 1);
  CHECK(server.requests() == 2);

  Check mismatch = MustVerify(verifier, Spec(server.Url("/m.pb"), std::string(64, 'f')));
  CHECK(mismatch.reason == kReasonChecksumMismatch);
  CHECK(mismatch.sha256 == kAbcSha);

  Check gone = MustVerify(verifier, Spec(server.Url("/gone"), kAbcSha));
  CHECK(gone.reason == "DownloadFailed");
  CHECK_FALSE(gone.verified);

  const int before = server.requests();
  Check unverified = MustVerify(verifier, Spec(server.Url("/m.pb")));
  CHECK_FALSE(unverified.verified);
  CHECK(unverified.reason.empty());
  CHECK(server.requests() == before);  // nothing to compare: not downloaded
}

TEST_CASE("a check can be cancelled", "[lc][model]") {
  TempDir root;
  root.Write("models/m.pb", std::string(1 << 20, 'x'));
  ModelVerifier verifier(RootedAt(root.path()));
  std::atomic<bool> cancel{true};
  absl::StatusOr<Check> check = verifier.Verify(Spec("/models/m.pb", kAbcSha), nullptr, &cancel);
  REQUIRE_FALSE(check.ok());
  CHECK(check.status().code() == absl::StatusCode::kCancelled);
}

}  // namespace
}  // namespace nereid::lc::model
