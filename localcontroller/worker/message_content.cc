#include "localcontroller/worker/message_content.h"

#include <algorithm>
#include <array>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/net/edge_protocol.h"
#include "common/strings/absl_compat.h"

namespace nereid::lc::worker {
namespace {

using Json = nlohmann::json;

// Serializing a body again (for the outbox and the operator API) recurses once per nesting level,
// so a 1 MiB body of brackets would overflow the HTTP thread's stack. Real reports nest a few
// levels (Go's encoding/json, which Sedna's LC uses, stops at 10000).
constexpr int kMaxDepth = 100;

absl::Status ReadString(const Json& body, const char* key, std::string* out) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_string()) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", key, "\" must be a string, got ", it->type_name()));
  }
  *out = it->get<std::string>();
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<MessageContent> ParseMessageContent(std::string_view body) {
  int depth = 0;
  Json j = Json::parse(
      body,
      [&depth](int level, Json::parse_event_t, Json&) {
        depth = std::max(depth, level);
        return true;
      },
      /*allow_exceptions=*/false);
  if (j.is_discarded()) return absl::InvalidArgumentError("body is not valid JSON");
  if (depth > kMaxDepth) {
    return absl::InvalidArgumentError(
        absl::StrCat("body is nested deeper than ", kMaxDepth, " levels"));
  }
  if (!j.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("body must be a JSON object, got ", j.type_name()));
  }
  MessageContent m;
  for (const auto& [key, out] : std::array<std::pair<const char*, std::string*>, 6>{{
           {"name", &m.name},
           {"namespace", &m.ns},
           {"ownerName", &m.owner_name},
           {"ownerKind", &m.owner_kind},
           {"kind", &m.kind},
           {"status", &m.status},
       }}) {
    if (absl::Status s = ReadString(j, key, out); !s.ok()) return s;
  }
  if (auto it = j.find("ownerInfo"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"ownerInfo\" must be an object, got ", it->type_name()));
    }
    m.owner_info = std::move(*it);
  }
  if (auto it = j.find("results"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"results\" must be an array, got ", it->type_name()));
    }
    for (size_t i = 0; i < it->size(); ++i) {
      const Json& element = (*it)[i];
      if (!element.is_object() && !element.is_null()) {
        return absl::InvalidArgumentError(absl::StrCat("\"results\"[", i,
                                                       "] must be an object, got ",
                                                       element.type_name()));
      }
    }
    m.results = std::move(*it);
  }
  return m;
}

std::span<const std::string_view> ForwardedKinds() {
  static constexpr std::string_view kKinds[] = {
      net::kKindJointInferenceService, net::kKindFederatedLearningJob,
      net::kKindIncrementalLearningJob, net::kKindLifelongLearningJob,
      net::kKindDistributedJob, net::kKindVideoAnalyticsJob, net::kKindReidJob,
      net::kKindFeatureExtractionService};
  return kKinds;
}

std::string_view OwnerKindToKind(std::string_view owner_kind) {
  for (std::string_view kind : ForwardedKinds()) {
    if (absl::EqualsIgnoreCase(ToAbsl(owner_kind), ToAbsl(kind))) return kind;
  }
  return "";
}

}  // namespace nereid::lc::worker
