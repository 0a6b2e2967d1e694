#include "common/kube/errors.h"

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/strings/absl_compat.h"

namespace nereid::kube {
namespace {

constexpr char kReasonUrl[] = "type.nereid.io/k8s.reason";
constexpr char kCausesUrl[] = "type.nereid.io/k8s.causes";
constexpr char kRetryAfterUrl[] = "type.nereid.io/k8s.retry-after";

absl::StatusCode CodeForReason(std::string_view reason, int http_code) {
  if (reason == "NotFound") return absl::StatusCode::kNotFound;
  if (reason == "AlreadyExists") return absl::StatusCode::kAlreadyExists;
  if (reason == "Conflict") return absl::StatusCode::kAborted;
  if (reason == "Gone" || reason == "Expired") return absl::StatusCode::kOutOfRange;
  if (reason == "Invalid" || reason == "BadRequest") return absl::StatusCode::kInvalidArgument;
  if (reason == "Forbidden") return absl::StatusCode::kPermissionDenied;
  if (reason == "Unauthorized") return absl::StatusCode::kUnauthenticated;
  if (reason == "TooManyRequests") return absl::StatusCode::kResourceExhausted;
  if (reason == "MethodNotAllowed" || reason == "NotAcceptable" ||
      reason == "UnsupportedMediaType") {
    return absl::StatusCode::kUnimplemented;
  }
  if (reason == "Timeout" || reason == "ServerTimeout") return absl::StatusCode::kDeadlineExceeded;
  if (reason == "ServiceUnavailable") return absl::StatusCode::kUnavailable;
  if (reason == "InternalError") return absl::StatusCode::kInternal;
  switch (http_code) {
    case 400: return absl::StatusCode::kInvalidArgument;
    case 401: return absl::StatusCode::kUnauthenticated;
    case 403: return absl::StatusCode::kPermissionDenied;
    case 404: return absl::StatusCode::kNotFound;
    case 405: case 406: case 415: return absl::StatusCode::kUnimplemented;
    case 409: return absl::StatusCode::kAborted;
    case 410: return absl::StatusCode::kOutOfRange;
    case 422: return absl::StatusCode::kInvalidArgument;
    case 429: return absl::StatusCode::kResourceExhausted;
    case 503: return absl::StatusCode::kUnavailable;
    case 504: return absl::StatusCode::kDeadlineExceeded;
    default: break;
  }
  return http_code >= 500 ? absl::StatusCode::kInternal : absl::StatusCode::kUnknown;
}

std::string DefaultReason(int http_code) {
  switch (http_code) {
    case 400: return "BadRequest";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "NotFound";
    case 405: return "MethodNotAllowed";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 422: return "Invalid";
    case 429: return "TooManyRequests";
    case 503: return "ServiceUnavailable";
    case 504: return "Timeout";
    default: return http_code >= 500 ? "InternalError" : "";
  }
}

Json CausesToJson(const std::vector<StatusCause>& causes) {
  Json list = Json::array();
  for (const StatusCause& cause : causes) {
    Json item = Json::object();
    if (!cause.reason.empty()) item["reason"] = cause.reason;
    if (!cause.message.empty()) item["message"] = cause.message;
    if (!cause.field.empty()) item["field"] = cause.field;
    list.push_back(std::move(item));
  }
  return list;
}

std::vector<StatusCause> CausesFromJson(const Json& list) {
  std::vector<StatusCause> causes;
  if (!list.is_array()) return causes;
  for (const Json& item : list) {
    if (!item.is_object()) continue;
    // StringAt, not Json::value(): a field of another type must read as absent, not throw.
    causes.push_back({StringAt(item, "reason"), StringAt(item, "message"), StringAt(item, "field")});
  }
  return causes;
}

}  // namespace

absl::Status MakeError(std::string_view reason, std::string_view message,
                       std::vector<StatusCause> causes) {
  absl::Status status(CodeForReason(reason, 0), ToAbsl(message));
  status.SetPayload(kReasonUrl, absl::Cord(ToAbsl(reason)));
  if (!causes.empty()) {
    status.SetPayload(kCausesUrl, absl::Cord(DumpCompact(CausesToJson(causes))));
  }
  return status;
}

absl::Status StatusFromResponse(int http_code, std::string_view body,
                                std::string_view retry_after) {
  std::string reason;
  std::string message;
  std::vector<StatusCause> causes;
  Json doc = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_object() && StringAt(doc, "kind") == "Status") {
    reason = StringAt(doc, "reason");
    message = StringAt(doc, "message");
    if (auto details = doc.find("details"); details != doc.end() && details->is_object()) {
      if (auto c = details->find("causes"); c != details->end()) causes = CausesFromJson(*c);
    }
  }
  if (reason.empty()) reason = DefaultReason(http_code);
  if (message.empty()) {
    message = absl::StrCat("HTTP ", http_code, body.empty() ? "" : ": ", ToAbsl(body.substr(0, 512)));
  }
  absl::Status status(CodeForReason(reason, http_code), message);
  if (!reason.empty()) status.SetPayload(kReasonUrl, absl::Cord(ToAbsl(reason)));
  if (!causes.empty()) {
    status.SetPayload(kCausesUrl, absl::Cord(DumpCompact(CausesToJson(causes))));
  }
  int64_t seconds = 0;
  if (!retry_after.empty() && absl::SimpleAtoi(ToAbsl(retry_after), &seconds) && seconds >= 0) {
    status.SetPayload(kRetryAfterUrl, absl::Cord(std::to_string(seconds)));
  }
  return status;
}

absl::Status NotFoundError(const std::string& qualified_resource, std::string_view name) {
  return MakeError("NotFound", absl::StrCat(qualified_resource, " \"", ToAbsl(name), "\" not found"));
}

absl::Status AlreadyExistsError(const std::string& qualified_resource, std::string_view name) {
  return MakeError("AlreadyExists",
                   absl::StrCat(qualified_resource, " \"", ToAbsl(name), "\" already exists"));
}

absl::Status ConflictError(const std::string& qualified_resource, std::string_view name,
                           std::string_view detail) {
  return MakeError("Conflict", absl::StrCat("Operation cannot be fulfilled on ", qualified_resource,
                                            " \"", ToAbsl(name), "\": ", ToAbsl(detail)));
}

absl::Status BadRequestError(std::string_view message) { return MakeError("BadRequest", message); }

absl::Status GoneError(std::string_view message) { return MakeError("Expired", message); }

absl::Status InvalidError(std::string_view kind, std::string_view name,
                          std::vector<StatusCause> causes) {
  std::string message = absl::StrCat(ToAbsl(kind), " \"", ToAbsl(name), "\" is invalid: ");
  for (size_t i = 0; i < causes.size(); ++i) {
    if (i > 0) message += ", ";
    absl::StrAppend(&message, causes[i].field, ": ", causes[i].message);
  }
  return MakeError("Invalid", message, std::move(causes));
}

std::string Reason(const absl::Status& status) {
  auto payload = status.GetPayload(kReasonUrl);
  return payload ? std::string(*payload) : std::string();
}

std::vector<StatusCause> Causes(const absl::Status& status) {
  auto payload = status.GetPayload(kCausesUrl);
  if (!payload) return {};
  return CausesFromJson(Json::parse(std::string(*payload), nullptr, false));
}

std::optional<absl::Duration> RetryAfter(const absl::Status& status) {
  auto payload = status.GetPayload(kRetryAfterUrl);
  int64_t seconds = 0;
  if (!payload || !absl::SimpleAtoi(std::string(*payload), &seconds)) return std::nullopt;
  return absl::Seconds(seconds);
}

int HttpCodeFor(const absl::Status& status) {
  std::string reason = Reason(status);
  if (reason == "Gone" || reason == "Expired") return 410;
  if (reason == "Conflict" || reason == "AlreadyExists") return 409;
  if (reason == "Invalid") return 422;
  if (reason == "BadRequest") return 400;
  if (reason == "MethodNotAllowed") return 405;
  if (reason == "NotAcceptable") return 406;
  if (reason == "UnsupportedMediaType") return 415;
  if (reason == "Timeout") return 504;
  if (reason == "InternalError") return 500;
  switch (status.code()) {
    case absl::StatusCode::kOk: return 200;
    case absl::StatusCode::kNotFound: return 404;
    case absl::StatusCode::kAlreadyExists: case absl::StatusCode::kAborted: return 409;
    case absl::StatusCode::kOutOfRange: return 410;
    case absl::StatusCode::kInvalidArgument: return 422;
    case absl::StatusCode::kPermissionDenied: return 403;
    case absl::StatusCode::kUnauthenticated: return 401;
    case absl::StatusCode::kResourceExhausted: return 429;
    case absl::StatusCode::kUnimplemented: return 405;
    case absl::StatusCode::kDeadlineExceeded: return 504;
    case absl::StatusCode::kUnavailable: return 503;
    default: return 500;
  }
}

Json StatusToJson(const absl::Status& status) {
  int code = HttpCodeFor(status);
  std::string reason = Reason(status);
  if (reason.empty()) reason = DefaultReason(code);
  Json doc = {{"kind", "Status"},
              {"apiVersion", "v1"},
              {"metadata", Json::object()},
              {"status", status.ok() ? "Success" : "Failure"},
              {"message", std::string(status.message())},
              {"reason", reason},
              {"code", code}};
  std::vector<StatusCause> causes = Causes(status);
  if (!causes.empty()) doc["details"] = {{"causes", CausesToJson(causes)}};
  return doc;
}

}  // namespace nereid::kube
