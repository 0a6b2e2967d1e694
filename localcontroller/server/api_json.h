#pragma once

// JSON renderings of the operator API (GET /api/v1/...) and the two error shapes of the LC's REST
// server:
//   operator API and every other path   {"error":{"code":404,"reason":"NotFound","message":"..."}}
//   Sedna's worker API (/sedna/...)      {"Status":400,"Message":"..."}   (what the Sedna SDK reads)
// Times are RFC 3339 UTC strings, or null when never.

#include <string_view>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "localcontroller/server/state_view.h"
#include "localcontroller/worker/worker_intake.h"
#include "nlohmann/json.hpp"

namespace nereid::lc::server {

nlohmann::json TimeJson(absl::Time time);

nlohmann::json ToJson(const StatusInfo& status);
nlohmann::json ToJson(const DatasetInfo& dataset);
nlohmann::json ToJson(const ModelInfo& model);
nlohmann::json ToJson(const worker::WorkerRecord& worker);

// "NotFound", "MethodNotAllowed", ... for an HTTP status code.
std::string_view ReasonForHttpCode(int code);
// 404 NotFound, 503 Unavailable, 400 InvalidArgument, 500 otherwise.
int HttpCodeForStatus(const absl::Status& status);

nlohmann::json ErrorJson(int code, std::string_view message);
nlohmann::json SednaReplyJson(int status, std::string_view message);

// Serializes for a response body; invalid UTF-8 from the outside is replaced, never thrown.
std::string Dump(const nlohmann::json& j);

}  // namespace nereid::lc::server
