#include "localcontroller/server/api_json.h"

#include "absl/time/clock.h"
#include "common/strings/absl_compat.h"

namespace nereid::lc::server {
namespace {

using Json = nlohmann::json;

// Embeds a JSON text the worker sent as JSON again (it was produced by our own dump).
Json EmbeddedJson(const std::string& text) {
  if (text.empty()) return nullptr;
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_discarded() ? Json(text) : j;
}

}  // namespace

Json TimeJson(absl::Time time) {
  if (time == absl::InfinitePast() || time == absl::InfiniteFuture()) return nullptr;
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", time, absl::UTCTimeZone());
}

Json ToJson(const StatusInfo& s) {
  const LinkInfo& l = s.link;
  return Json{
      {"node", s.node},
      {"version", s.version},
      {"startTime", TimeJson(s.started)},
      {"cloudLink",
       {{"gmAddress", s.gm_address},
        {"state", l.state},
        {"synced", l.synced},
        {"lastConnectedTime", TimeJson(l.last_connected)},
        {"lastSyncTime", TimeJson(l.last_sync)},
        {"lastError", l.last_error.empty() ? Json(nullptr) : Json(l.last_error)},
        {"lastErrorTime", TimeJson(l.last_error_at)},
        {"nextAttemptTime", l.state == "backoff" ? TimeJson(l.next_attempt) : Json(nullptr)},
        {"attempts", l.attempts},
        {"server", l.server.empty() ? Json(nullptr) : Json(l.server)},
        {"redirects", l.redirects},
        {"changesApplied", l.changes_applied},
        {"changesNacked", l.changes_nacked},
        {"reportsSent", l.reports_sent},
        {"reportsAcked", l.reports_acked},
        {"reportsRejected", l.reports_rejected},
        {"reportsRetried", l.reports_retried}}},
      {"outboxDepth", s.outbox_depth},
      {"objects", s.objects},
      {"datasets", s.datasets},
      {"models", s.models},
      {"workers", s.workers},
  };
}

// Which Secret the object names and whether its credential arrived; never the values.
void AddCredential(const std::string& name, bool received, Json& spec) {
  if (name.empty() && !received) return;
  spec["credentialName"] = name;
  spec["credentialReceived"] = received;
}

Json ToJson(const DatasetInfo& d) {
  Json status = {
      {"scanned", d.scanned},
      {"numberOfSamples", d.count.has_value() ? Json(*d.count) : Json(nullptr)},
      {"lastScanTime", TimeJson(d.last_scan)},
  };
  if (!d.error_reason.empty()) {
    status["errorReason"] = d.error_reason;
    status["errorMessage"] = d.error_message;
  }
  if (d.stale) status["stale"] = true;
  Json spec = {{"url", d.url}, {"format", d.format}, {"nodeName", d.node_name}};
  AddCredential(d.credential_name, d.credential_received, spec);
  return Json{{"namespace", d.ns},
              {"name", d.name},
              {"uid", d.uid},
              {"version", d.version},
              {"spec", std::move(spec)},
              {"status", std::move(status)}};
}

Json ToJson(const ModelInfo& m) {
  Json spec = {{"url", m.url}, {"format", m.format}};
  if (!m.expected_sha256.empty()) spec["sha256"] = m.expected_sha256;
  AddCredential(m.credential_name, m.credential_received, spec);
  Json status = {
      {"checked", m.checked},
      {"present", m.present},
      {"verified", m.verified},
      {"sha256", m.sha256.empty() ? Json(nullptr) : Json(m.sha256)},
      {"size", m.size.has_value() ? Json(*m.size) : Json(nullptr)},
      {"lastCheckTime", TimeJson(m.last_check)},
  };
  if (!m.error_reason.empty()) {
    status["errorReason"] = m.error_reason;
    status["errorMessage"] = m.error_message;
  }
  return Json{{"namespace", m.ns},     {"name", m.name},           {"uid", m.uid},
              {"version", m.version},  {"spec", std::move(spec)}, {"status", std::move(status)}};
}

Json ToJson(const worker::WorkerRecord& w) {
  Json j = {{"name", w.name},
            {"namespace", w.ns},
            {"ownerKind", w.owner_kind},
            {"ownerName", w.owner_name},
            {"kind", w.kind},
            {"status", w.status},
            {"receivedTime", TimeJson(w.received)},
            {"reports", w.reports},
            {"forwarded", w.forwarded},
            {"ownerInfo", EmbeddedJson(w.owner_info_json)},
            {"results", EmbeddedJson(w.results_json)}};
  if (!w.attributed_kind.empty()) j["attributedKind"] = w.attributed_kind;
  if (w.details_truncated) j["detailsTruncated"] = true;
  return j;
}

std::string_view ReasonForHttpCode(int code) {
  switch (code) {
    case 400:
      return "BadRequest";
    case 404:
      return "NotFound";
    case 405:
      return "MethodNotAllowed";
    case 408:
      return "RequestTimeout";
    case 413:
      return "RequestEntityTooLarge";
    case 414:
      return "RequestURITooLong";
    case 500:
      return "InternalError";
    case 503:
      return "ServiceUnavailable";
    default:
      return code >= 500 ? "InternalError" : "BadRequest";
  }
}

int HttpCodeForStatus(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return 200;
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kUnavailable:
      return 503;
    case absl::StatusCode::kInvalidArgument:
      return 400;
    default:
      return 500;
  }
}

Json ErrorJson(int code, std::string_view message) {
  return Json{{"error",
               {{"code", code},
                {"reason", std::string(ReasonForHttpCode(code))},
                {"message", std::string(message)}}}};
}

Json SednaReplyJson(int status, std::string_view message) {
  return Json{{"Status", status}, {"Message", std::string(message)}};
}

std::string Dump(const Json& j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace nereid::lc::server
