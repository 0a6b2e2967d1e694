#pragma once

// Kubernetes API errors as absl::Status. Every failure reason the API server reports in a
// metav1.Status body maps to its own canonical code, and the Kubernetes reason, field causes and
// Retry-After travel as payloads, so callers branch with IsNotFound(s), IsConflict(s), ... instead
// of matching strings.
//
//   Kubernetes reason          HTTP  absl code
//   NotFound                   404   kNotFound
//   AlreadyExists              409   kAlreadyExists
//   Conflict                   409   kAborted
//   Gone / Expired             410   kOutOfRange          (resourceVersion older than history)
//   Invalid                    422   kInvalidArgument     (+ field causes)
//   BadRequest                 400   kInvalidArgument
//   Forbidden                  403   kPermissionDenied
//   Unauthorized               401   kUnauthenticated
//   TooManyRequests            429   kResourceExhausted   (+ Retry-After seconds)
//   MethodNotAllowed           405   kUnimplemented
//   Timeout / ServerTimeout    504   kDeadlineExceeded
//   ServiceUnavailable         503   kUnavailable
//   InternalError / other 5xx  500   kInternal

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/kube/object.h"

namespace nereid::kube {

struct StatusCause {
  std::string reason;  // e.g. "FieldValueRequired"
  std::string message;
  std::string field;   // e.g. "spec.format"
};

// Builds the absl::Status for an HTTP response. `body` may be a metav1.Status JSON document or
// anything else (then the HTTP code alone decides). `retry_after` is the Retry-After header value.
absl::Status StatusFromResponse(int http_code, std::string_view body,
                                std::string_view retry_after = "");

// Builds an error with a Kubernetes reason attached (used by devapiserver and fakes).
absl::Status MakeError(std::string_view reason, std::string_view message,
                       std::vector<StatusCause> causes = {});
absl::Status BadRequestError(std::string_view message);
absl::Status NotFoundError(const std::string& qualified_resource, std::string_view name);
absl::Status AlreadyExistsError(const std::string& qualified_resource, std::string_view name);
absl::Status ConflictError(const std::string& qualified_resource, std::string_view name,
                           std::string_view detail);
absl::Status GoneError(std::string_view message);
absl::Status InvalidError(std::string_view kind, std::string_view name,
                          std::vector<StatusCause> causes);

// The metav1.Status document and HTTP code the API server would send for `status`.
Json StatusToJson(const absl::Status& status);
int HttpCodeFor(const absl::Status& status);

// The Kubernetes reason ("NotFound", "Conflict", ...) carried by `status`, or "" if none.
std::string Reason(const absl::Status& status);
std::vector<StatusCause> Causes(const absl::Status& status);
// Retry-After the server asked for (429/503), if any.
std::optional<absl::Duration> RetryAfter(const absl::Status& status);

// NotFound and AlreadyExists are absl::IsNotFound / absl::IsAlreadyExists (found by ADL).
inline bool IsConflict(const absl::Status& s) { return s.code() == absl::StatusCode::kAborted; }
inline bool IsGone(const absl::Status& s) { return s.code() == absl::StatusCode::kOutOfRange; }
inline bool IsInvalid(const absl::Status& s) {
  return s.code() == absl::StatusCode::kInvalidArgument;
}
inline bool IsForbidden(const absl::Status& s) {
  return s.code() == absl::StatusCode::kPermissionDenied;
}
inline bool IsUnauthorized(const absl::Status& s) {
  return s.code() == absl::StatusCode::kUnauthenticated;
}
inline bool IsTooManyRequests(const absl::Status& s) {
  return s.code() == absl::StatusCode::kResourceExhausted;
}

}  // namespace nereid::kube
