// s3:// models through ModelVerifier with an in-memory S3Client.

#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "localcontroller/model/model_verifier.h"
#include "tests/localcontroller/s3/fake_s3_client.h"

namespace nereid::lc::model {
namespace {

using s3::testing::FakeS3Client;

// SHA-256("abc"), FIPS 180-2 appendix B.1.
constexpr char kAbcSha[] = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

struct Fixture {
  Fixture() {
    store = std::make_shared<FakeS3Client>();
    store->PutObject("models", "m.pb", "abc");
    VerifierOptions options;
    options.s3 = store;
    verifier = std::make_unique<ModelVerifier>(options);
  }
  ModelSpec Spec(const std::string& url, const std::string& sha, bool with_credential = true) {
    ModelSpec spec{"default/m1", url, "pb", sha};
    if (with_credential) spec.s3_credential = s3::Credential{"minio:9000", true, "AKID", "SECRET"};
    return spec;
  }
  Check Verify(const ModelSpec& spec, const Check* previous = nullptr) {
    absl::StatusOr<Check> check = verifier->Verify(spec, previous, nullptr);
    INFO(check.status());
    REQUIRE(check.ok());
    return *check;
  }

  std::shared_ptr<FakeS3Client> store;
  std::unique_ptr<ModelVerifier> verifier;
};

TEST_CASE("an s3 model is verified by sha256; unchanged, it costs one HEAD", "[lc][model]") {
  Fixture f;
  Check first = f.Verify(f.Spec("s3://models/m.pb", kAbcSha));
  CHECK(first.verified);
  CHECK(first.present);
  CHECK(first.reason.empty());
  CHECK(first.sha256 == kAbcSha);
  CHECK(first.size == 3u);
  CHECK(first.bytes_hashed == 3);
  REQUIRE(first.fingerprint.has_value());
  CHECK(first.fingerprint->source == "s3://models/m.pb");

  Check again = f.Verify(f.Spec("s3://models/m.pb", kAbcSha), &first);
  CHECK(again.verified);
  CHECK(again.bytes_hashed == 0);
  CHECK(f.store->gets == 1);
  CHECK(f.store->heads == 2);

  f.store->PutObject("models", "m.pb", "abd");
  Check changed = f.Verify(f.Spec("s3://models/m.pb", kAbcSha), &again);
  CHECK_FALSE(changed.verified);
  CHECK(changed.reason == kReasonChecksumMismatch);
  CHECK(f.store->gets == 2);
}

TEST_CASE("without a sha256 an s3 model is checked for existence and size only", "[lc][model]") {
  Fixture f;
  Check check = f.Verify(f.Spec("s3://models/m.pb", ""));
  CHECK(check.present);
  CHECK_FALSE(check.verified);
  CHECK(check.reason.empty());
  CHECK(check.size == 3u);
  CHECK(f.store->gets == 0);
}

TEST_CASE("s3 model errors are reported with a reason", "[lc][model]") {
  Fixture f;
  CHECK(f.Verify(f.Spec("s3://models/gone.pb", kAbcSha)).reason == "PathNotFound");
  CHECK(f.Verify(f.Spec("s3://models/m.pb", kAbcSha, false)).reason == "CredentialMissing");
  CHECK(f.Verify(f.Spec("s3://", kAbcSha)).reason == "InvalidURL");
  f.store->RequireAccessKey("OTHER");
  Check denied = f.Verify(f.Spec("s3://models/m.pb", kAbcSha));
  CHECK(denied.reason == "PermissionDenied");
  CHECK(denied.message.find("SECRET") == std::string::npos);
  f.store->RequireAccessKey("");
  f.store->FailWith(absl::UnavailableError("endpoint unreachable"));
  CHECK(f.Verify(f.Spec("s3://models/m.pb", kAbcSha)).reason == "DownloadFailed");
}

}  // namespace
}  // namespace nereid::lc::model
