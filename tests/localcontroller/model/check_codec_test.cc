#include "localcontroller/model/check_codec.h"

#include <catch2/catch.hpp>

namespace nereid::lc::model {
namespace {

TEST_CASE("a check survives serialization; garbage is refused", "[lc][model]") {
  Check check;
  check.verified = true;
  check.present = true;
  check.sha256 = std::string(64, 'a');
  check.size = 12345678901ull;
  check.fingerprint = Fingerprint{"/models/m.pb", 64769, 1234, 12345678901ull,
                                  1700000000123456789, "\"etag\"", "Tue, 01 Jan 2030"};
  absl::StatusOr<Check> back = ParseCheck(SerializeCheck(check));
  REQUIRE(back.ok());
  CHECK(back->verified);
  CHECK(back->sha256 == check.sha256);
  CHECK(back->size == check.size);
  CHECK(back->fingerprint == check.fingerprint);
  CHECK(back->bytes_hashed == 0);

  Check error;
  error.reason = "PathNotFound";
  error.message = "gone";
  absl::StatusOr<Check> error_back = ParseCheck(SerializeCheck(error));
  REQUIRE(error_back.ok());
  CHECK(*error_back == error);

  CHECK_FALSE(ParseCheck("").ok());
  CHECK_FALSE(ParseCheck("[1]").ok());
  CHECK_FALSE(ParseCheck(R"({"v":2})").ok());
  CHECK_FALSE(ParseCheck(R"({"v":1,"sha256":7})").ok());
  CHECK_FALSE(ParseCheck(R"({"v":1,"fp":{"dev":"x"}})").ok());
}

}  // namespace
}  // namespace nereid::lc::model
