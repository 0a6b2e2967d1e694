#include "globalmanager/controllers/federated_learning_status.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "common/api/json_fields.h"
#include "globalmanager/controllers/library_job_status.h"

namespace nereid::gm {
namespace {

using kube::Json;
namespace ct = job::condition_types;

// Parses JSON text without exceptions; discarded (null) when malformed.
Json ParseOrNull(std::string_view text) {
  if (text.empty()) return nullptr;
  Json parsed = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  return parsed.is_discarded() ? Json(nullptr) : parsed;
}

std::string NumberText(const Json& value) {
  if (value.is_number_integer() || value.is_number_unsigned()) return value.dump();
  double d = value.get<double>();
  if (!std::isfinite(d)) return value.dump();
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.17g", d);
  // The shortest text that reads back as the same double.
  for (int precision = 1; precision <= 17; ++precision) {
    char shorter[32];
    std::snprintf(shorter, sizeof(shorter), "%.*g", precision, d);
    if (std::strtod(shorter, nullptr) == d) return shorter;
  }
  return buf;
}

// The condition the job's current state shows, if any.
std::optional<api::Condition> CurrentCondition(const FlStatusUpdate& update) {
  const job::JobStatus& js = *update.job;
  api::Condition c;
  if (const api::Condition* failed = js.FindCondition(ct::kFailed);
      failed != nullptr && failed->IsTrue()) {
    c.type = fl_conditions::kFailed;
    c.reason = failed->reason;
    c.message = failed->message;
    return c;
  }
  if (const api::Condition* done = js.FindCondition(ct::kSucceeded);
      done != nullptr && done->IsTrue()) {
    c.type = fl_conditions::kComplete;
    c.reason = done->reason;
    c.message = done->message;
    return c;
  }
  c.type = fl_conditions::kTraining;
  if (const api::Condition* suspended = js.FindCondition(ct::kSuspended);
      suspended != nullptr && suspended->IsTrue()) {
    c.status = "False";
    c.reason = suspended->reason;
    c.message = suspended->message;
    return c;
  }
  if (!update.no_nodes_message.empty()) {
    c.status = "False";
    c.reason = fl_reasons::kNoMatchingNodes;
    c.message = update.no_nodes_message;
    return c;
  }
  if (const api::Condition* restarting = js.FindCondition(ct::kRestarting);
      restarting != nullptr && restarting->IsTrue()) {
    c.reason = restarting->reason;
    c.message = restarting->message;
    return c;
  }
  if (const api::Condition* running = js.FindCondition(ct::kRunning); running != nullptr) {
    c.status = running->IsTrue() ? "True" : "False";
    c.reason = running->reason;
    c.message = running->message;
    return c;
  }
  return std::nullopt;  // Created, pods not all running yet: Sedna shows no condition either.
}

}  // namespace

job::JobStatus ReadEmbeddedJobStatus(const Json& object) {
  return ReadEmbeddedLibraryStatus(object, kFlJobStatusField);
}

std::string_view FlPhase(std::string_view job_phase) { return SednaJobPhase(job_phase); }

void ApplyReconcileStatus(const FlStatusUpdate& update, Json* status) {
  if (!status->is_object()) *status = Json::object();
  const job::JobStatus& js = *update.job;
  (*status)["phase"] = std::string(FlPhase(js.phase));
  PutLibraryJobCounts(js, status);
  (*status)["observedGeneration"] = update.generation;
  (*status)[std::string(kFlJobStatusField)] = js.ToJson();

  if (std::optional<api::Condition> current = CurrentCondition(update)) {
    AppendSednaCondition(*std::move(current), update.now, status);
  }
}

std::optional<int64_t> ReportedRound(std::string_view owner_info_json) {
  Json info = ParseOrNull(owner_info_json);
  if (!info.is_object()) return std::nullopt;
  auto it = info.find("currentRound");
  if (it == info.end()) return std::nullopt;
  int64_t round = 0;
  if (it->is_number_integer() || it->is_number_unsigned()) {
    round = it->get<int64_t>();
  } else if (it->is_number_float()) {
    double d = it->get<double>();
    if (!std::isfinite(d) || d < 1 || d > 9e15) return std::nullopt;
    round = static_cast<int64_t>(d);
  } else if (it->is_string()) {
    if (!absl::SimpleAtoi(it->get<std::string>(), &round)) return std::nullopt;
  } else {
    return std::nullopt;
  }
  if (round <= 0) return std::nullopt;
  return round;
}

bool ResetRound(Json* status) {
  if (status == nullptr || !status->is_object()) return false;
  const size_t erased = status->erase("currentRound") + status->erase("roundUpdateTime");
  return erased > 0;
}

bool ApplyRound(int64_t round, absl::Time at, Json* status) {
  if (!status->is_object()) *status = Json::object();
  auto it = status->find("currentRound");
  if (it != status->end() && it->is_number_integer() && it->get<int64_t>() >= round) return false;
  (*status)["currentRound"] = round;
  (*status)["roundUpdateTime"] = kube::FormatTimestamp(at);
  return true;
}

std::vector<api::Metric> ReportedMetrics(std::string_view results_json) {
  std::vector<api::Metric> out;
  Json results = ParseOrNull(results_json);
  // Sedna's training workers report `results` as the list of models; tolerate {"models": [...]}.
  if (results.is_object() && results.contains("models")) results = results["models"];
  if (!results.is_array() || results.empty() || !results[0].is_object()) return out;
  auto metrics = results[0].find("metrics");
  if (metrics == results[0].end() || !metrics->is_object()) return out;
  for (const auto& [key, value] : metrics->items()) {
    std::string text;
    if (value.is_string()) {
      text = value.get<std::string>();
    } else if (value.is_number()) {
      text = NumberText(value);
    } else if (value.is_array()) {
      std::vector<std::string> parts;
      for (const Json& v : value) parts.push_back(v.is_number() ? NumberText(v) : v.dump());
      text = absl::StrJoin(parts, ",");
    } else {
      text = value.dump();
    }
    out.push_back({key, std::move(text)});
  }
  std::sort(out.begin(), out.end(),
            [](const api::Metric& a, const api::Metric& b) { return a.key < b.key; });
  return out;
}

bool ApplyModelMetrics(const std::vector<api::Metric>& metrics, absl::Time at, Json* status) {
  if (!status->is_object()) *status = Json::object();
  Json list = Json::array();
  for (const api::Metric& m : metrics) list.push_back(m.ToJson());
  auto it = status->find("metrics");
  if (it != status->end() && *it == list) return false;
  (*status)["metrics"] = std::move(list);
  (*status)["updateTime"] = kube::FormatTimestamp(at);
  return true;
}

}  // namespace nereid::gm
