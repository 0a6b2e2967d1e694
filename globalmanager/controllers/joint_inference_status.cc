#include "globalmanager/controllers/joint_inference_status.h"

#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/api/joint_inference_service.h"
#include "common/kube/object.h"
#include "common/strings/absl_compat.h"
#include "globalmanager/controllers/service_phase_status.h"

namespace nereid::gm {
namespace {

using kube::Json;

int64_t IntAt(const Json& obj, std::string_view path, int64_t fallback) {
  const Json* value = kube::FindPath(obj, path);
  return value != nullptr && value->is_number_integer() ? value->get<int64_t>() : fallback;
}

const Json* FindCondition(const Json& deployment, std::string_view type) {
  const Json* conditions = kube::FindPath(deployment, "status.conditions");
  if (conditions == nullptr || !conditions->is_array()) return nullptr;
  for (const Json& c : *conditions) {
    if (c.is_object() && kube::StringAt(c, "type") == type) return &c;
  }
  return nullptr;
}

std::string ConditionText(const Json& condition) {
  std::string reason = kube::StringAt(condition, "reason");
  std::string message = kube::StringAt(condition, "message");
  if (message.empty()) return reason;
  if (reason.empty()) return message;
  return absl::StrCat(reason, ": ", message);
}

std::string Describe(std::string_view worker, const WorkerHealth& h) {
  if (!h.exists) return absl::StrCat(ToAbsl(worker), " worker not created yet");
  if (h.failed) return absl::StrCat(ToAbsl(worker), " worker failed: ", h.problem);
  if (h.available) {
    return absl::StrCat(ToAbsl(worker), " worker available (", h.available_replicas, "/",
                        h.desired_replicas, ")");
  }
  return absl::StrCat(ToAbsl(worker), " worker not available",
                      h.problem.empty() ? "" : absl::StrCat(" (", h.problem, ")"));
}

// A JSON scalar as Go's fmt/json would print it for a metric value.
std::string MetricValue(const Json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_float()) {
    const double d = value.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 1e15) {
      return std::to_string(static_cast<int64_t>(d));
    }
  }
  return kube::DumpCompact(value);
}

}  // namespace

WorkerHealth AssessDeployment(const Json* deployment) {
  WorkerHealth h;
  if (deployment == nullptr) return h;
  h.exists = true;
  const Json& d = *deployment;
  h.available_replicas = static_cast<int32_t>(IntAt(d, "status.availableReplicas", 0));
  h.desired_replicas = static_cast<int32_t>(IntAt(d, "spec.replicas", 1));
  h.available = h.available_replicas >= 1;
  const bool observed = IntAt(d, "status.observedGeneration", 0) >= kube::Generation(d);
  if (observed && !h.available) {
    const Json* progressing = FindCondition(d, "Progressing");
    const Json* replica_failure = FindCondition(d, "ReplicaFailure");
    if (progressing != nullptr && kube::StringAt(*progressing, "status") == "False" &&
        kube::StringAt(*progressing, "reason") == "ProgressDeadlineExceeded") {
      h.failed = true;
      h.problem = ConditionText(*progressing);
    } else if (replica_failure != nullptr &&
               kube::StringAt(*replica_failure, "status") == "True") {
      h.failed = true;
      h.problem = ConditionText(*replica_failure);
    }
  }
  if (!h.available && !h.failed) {
    if (h.desired_replicas == 0) {
      h.problem = "scaled to 0 replicas";
    } else if (const Json* available = FindCondition(d, "Available");
               available != nullptr && kube::StringAt(*available, "status") == "False") {
      h.problem = ConditionText(*available);
    } else {
      h.problem = "no replica available yet";
    }
  }
  return h;
}

JiState ComputeJiState(const WorkerHealth& cloud, const std::vector<WorkerHealth>& edges) {
  JiState s;
  int edge_available = 0;
  int edge_failed = 0;
  for (const WorkerHealth& e : edges) {
    edge_available += e.available ? 1 : 0;
    edge_failed += e.failed ? 1 : 0;
  }
  s.active = (cloud.available ? 1 : 0) + edge_available;
  s.failed = (cloud.failed ? 1 : 0) + edge_failed;

  std::vector<std::string> parts = {Describe("cloud", cloud)};
  if (edges.size() == 1) {
    parts.push_back(Describe("edge", edges[0]));
  } else if (!edges.empty()) {
    std::string edge_part =
        absl::StrCat(edge_available, " of ", edges.size(), " edge workers available");
    if (edge_failed > 0) absl::StrAppend(&edge_part, ", ", edge_failed, " failed");
    parts.push_back(std::move(edge_part));
  }

  if (cloud.failed || (edge_available == 0 && edge_failed > 0)) {
    s.phase = std::string(api::ji_phases::kFailed);
    s.reason = std::string(service_reasons::kWorkerFailed);
  } else if (edges.empty()) {
    s.phase = std::string(api::ji_phases::kPending);
    s.reason = std::string(ji_reasons::kNoEdgeNode);
    parts.push_back("no edge node matches the edge worker's node selection");
  } else if (cloud.available && edge_available > 0) {
    s.phase = std::string(api::ji_phases::kRunning);
    s.reason = std::string(service_reasons::kWorkersAvailable);
  } else {
    s.phase = std::string(api::ji_phases::kPending);
    s.reason = std::string(service_reasons::kWorkersNotAvailable);
  }
  s.message = absl::StrJoin(parts, "; ");
  return s;
}

absl::StatusOr<std::vector<api::Metric>> MetricsFromOwnerInfo(std::string_view owner_info_json) {
  std::vector<api::Metric> metrics;
  if (owner_info_json.empty()) return metrics;
  Json info = Json::parse(owner_info_json, nullptr, /*allow_exceptions=*/false);
  if (info.is_discarded() || !info.is_object()) {
    return absl::InvalidArgumentError("ownerInfo is not a JSON object");
  }
  std::map<std::string, std::string> sorted;
  for (auto& [key, value] : info.items()) {
    if (key == "startTime" || key == "updateTime") continue;
    sorted[key] = MetricValue(value);
  }
  for (auto& [key, value] : sorted) metrics.push_back({key, value});
  return metrics;
}

}  // namespace nereid::gm
