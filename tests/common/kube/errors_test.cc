#include <catch2/catch.hpp>

#include "common/kube/errors.h"

#include "absl/strings/match.h"

namespace nereid::kube {
namespace {

std::string StatusBody(std::string_view reason, int code, std::string_view extra = "") {
  return std::string(R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":"m",)") +
         R"("reason":")" + std::string(reason) + R"(","code":)" + std::to_string(code) +
         std::string(extra) + "}";
}

TEST_CASE("each Kubernetes reason maps to its own predicate") {
  CHECK(IsNotFound(StatusFromResponse(404, StatusBody("NotFound", 404))));
  CHECK(IsAlreadyExists(StatusFromResponse(409, StatusBody("AlreadyExists", 409))));
  CHECK(IsConflict(StatusFromResponse(409, StatusBody("Conflict", 409))));
  CHECK_FALSE(IsConflict(StatusFromResponse(409, StatusBody("AlreadyExists", 409))));
  CHECK(IsGone(StatusFromResponse(410, StatusBody("Expired", 410))));
  CHECK(IsGone(StatusFromResponse(410, StatusBody("Gone", 410))));
  CHECK(IsForbidden(StatusFromResponse(403, StatusBody("Forbidden", 403))));
  CHECK(IsUnauthorized(StatusFromResponse(401, StatusBody("Unauthorized", 401))));
  CHECK(IsInvalid(StatusFromResponse(422, StatusBody("Invalid", 422))));
  CHECK(StatusFromResponse(500, StatusBody("InternalError", 500)).code() ==
        absl::StatusCode::kInternal);
  CHECK(StatusFromResponse(503, "").code() == absl::StatusCode::kUnavailable);
  CHECK(StatusFromResponse(404, "<html>not json</html>").code() == absl::StatusCode::kNotFound);
}

TEST_CASE("Invalid keeps the field causes") {
  absl::Status s = StatusFromResponse(
      422, StatusBody("Invalid", 422,
                      R"(,"details":{"causes":[{"reason":"FieldValueRequired","message":"Required value","field":"spec.format"}]})"));
  REQUIRE(Causes(s).size() == 1);
  CHECK(Causes(s)[0].field == "spec.format");
  CHECK(Reason(s) == "Invalid");
}

// Found by fuzzing (tests/fuzz/api_object, finding 6): a cause quoting a value with invalid
// UTF-8 made the causes' JSON dump throw out of InvalidError.
TEST_CASE("Invalid keeps causes whose text is not UTF-8, replaced") {
  absl::Status s;
  REQUIRE_NOTHROW(s = InvalidError("Dataset", "d", {{"FieldValueInvalid", "bad \xB7", "spec.url"}}));
  REQUIRE(Causes(s).size() == 1);
  CHECK(Causes(s)[0].message == "bad \xEF\xBF\xBD");  // U+FFFD
  CHECK(Causes(s)[0].field == "spec.url");
}

// Found by fuzzing (tests/fuzz/watch_stream): a Status whose kind, reason, message or cause fields
// were not strings made Json::value() throw out of StatusFromResponse, on a reader thread.
TEST_CASE("Status fields of the wrong type read as absent, never throw") {
  absl::Status kind = StatusFromResponse(410, R"({"kind":"Status","kind":410,"reason":"Expired"})");
  CHECK(IsGone(kind));  // not a Status document: the HTTP code decides
  CHECK(absl::StrContains(kind.message(), "HTTP 410"));
  absl::Status fields = StatusFromResponse(
      409, R"({"kind":"Status","reason":["Conflict"],"message":{},"details":{"causes":[)"
           R"({"reason":1,"message":null,"field":true},"x"]}})");
  CHECK(IsConflict(fields));
  REQUIRE(Causes(fields).size() == 1);
  CHECK(Causes(fields)[0].field.empty());
}

TEST_CASE("TooManyRequests carries Retry-After") {
  absl::Status s = StatusFromResponse(429, StatusBody("TooManyRequests", 429), "3");
  CHECK(IsTooManyRequests(s));
  CHECK(RetryAfter(s) == absl::Seconds(3));
  CHECK_FALSE(RetryAfter(StatusFromResponse(429, "", "soon")).has_value());
}

TEST_CASE("errors built locally serialize to the Status the API server would send") {
  absl::Status invalid =
      InvalidError("Dataset", "d1", {{"FieldValueRequired", "Required value", "spec.url"}});
  Json doc = StatusToJson(invalid);
  CHECK(doc["code"] == 422);
  CHECK(doc["reason"] == "Invalid");
  CHECK(doc["details"]["causes"][0]["field"] == "spec.url");
  CHECK(HttpCodeFor(ConflictError("pods", "p", "stale")) == 409);
  CHECK(HttpCodeFor(AlreadyExistsError("pods", "p")) == 409);
  CHECK(HttpCodeFor(GoneError("too old")) == 410);
  CHECK(HttpCodeFor(NotFoundError("pods", "p")) == 404);
  // Round trip: what we send is parsed back to the same predicate.
  CHECK(IsConflict(StatusFromResponse(409, StatusToJson(ConflictError("pods", "p", "x")).dump())));
}

}  // namespace
}  // namespace nereid::kube

namespace nereid::kube {
namespace {

TEST_CASE("reasons with their own HTTP codes") {
  CHECK(HttpCodeFor(MakeError("UnsupportedMediaType", "x")) == 415);
  CHECK(HttpCodeFor(MakeError("NotAcceptable", "x")) == 406);
  CHECK(HttpCodeFor(MakeError("MethodNotAllowed", "x")) == 405);
  CHECK(HttpCodeFor(MakeError("Timeout", "x")) == 504);
  CHECK(StatusToJson(MakeError("UnsupportedMediaType", "x"))["code"] == 415);
}

}  // namespace
}  // namespace nereid::kube
