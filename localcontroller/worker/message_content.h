#pragma once

// Sedna's worker report body (pkg/localcontroller/worker/worker.go MessageContent), as the Sedna
// Python SDK posts it to POST /sedna/workers/{worker}/info:
//   {"name","namespace","ownerName","ownerKind","ownerInfo":{},"kind","status","results":[{}]}
// Parsed as Go's encoding/json would: unknown keys ignored, a missing key or null is empty, a value
// of the wrong type is an error (so a body Sedna's LC refuses is refused here too).

#include <span>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace nereid::lc::worker {

struct MessageContent {
  std::string name;        // the worker's name (WORKER_NAME)
  std::string ns;          // "namespace"
  std::string owner_name;  // the owning object (job/service) name
  std::string owner_kind;  // lower-case Sedna kind, e.g. "jointinferenceservice"
  std::string kind;        // train | eval | inference | ...
  std::string status;      // ready | completed | failed | running | ...
  nlohmann::json owner_info;  // object or null
  nlohmann::json results;     // array of objects or null
};

// InvalidArgument naming the problem (not JSON, not an object, nested deeper than 100 levels,
// "<field> must be a string", ...).
absl::StatusOr<MessageContent> ParseMessageContent(std::string_view body);

// The ObjectRef kinds the LC forwards worker reports about.
std::span<const std::string_view> ForwardedKinds();

// The ObjectRef kind for a report's ownerKind (case-insensitive: "jointinferenceservice" ->
// "JointInferenceService"), or "" when the LC has no upstream for that kind.
std::string_view OwnerKindToKind(std::string_view owner_kind);

}  // namespace nereid::lc::worker
