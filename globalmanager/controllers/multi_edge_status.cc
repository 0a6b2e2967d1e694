#include "globalmanager/controllers/multi_edge_status.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/api/multi_edge_common.h"
#include "globalmanager/controllers/service_phase_status.h"

namespace nereid::gm {
namespace {

using kube::Json;

// Container waiting reasons that do not resolve by waiting (the kubelet backs off forever).
bool StuckWaiting(const std::string& reason) {
  static const std::set<std::string> kStuck = {
      "CrashLoopBackOff",           "ErrImagePull",         "ImagePullBackOff",
      "CreateContainerConfigError", "CreateContainerError", "InvalidImageName"};
  return kStuck.count(reason) > 0;
}

std::string Describe(const NamedWorker& w) {
  const WorkerHealth& h = w.health;
  if (!h.exists) return absl::StrCat(w.what, " not created yet");
  if (h.failed) return absl::StrCat(w.what, " failed: ", h.problem);
  if (h.available) return absl::StrCat(w.what, " available");
  return absl::StrCat(w.what, " not available",
                      h.problem.empty() ? "" : absl::StrCat(" (", h.problem, ")"));
}

}  // namespace

WorkerHealth AssessPod(const Json* pod) {
  WorkerHealth h;
  if (pod == nullptr) return h;
  h.exists = true;
  h.desired_replicas = 1;
  const std::string phase = kube::StringAt(*pod, "status.phase");
  if (phase == "Running") {
    h.available = true;
    h.available_replicas = 1;
    return h;
  }
  if (phase == "Failed") {
    h.failed = true;
    const std::string reason = kube::StringAt(*pod, "status.reason");
    const std::string message = kube::StringAt(*pod, "status.message");
    h.problem = absl::StrCat("pod ", kube::Name(*pod), " failed",
                             reason.empty() ? "" : absl::StrCat(": ", reason),
                             message.empty() ? "" : absl::StrCat(" (", message, ")"));
    return h;
  }
  if (phase == "Succeeded") {
    h.problem = absl::StrCat("pod ", kube::Name(*pod), " exited; being replaced");
    return h;
  }
  if (const Json* statuses = kube::FindPath(*pod, "status.containerStatuses");
      statuses != nullptr && statuses->is_array()) {
    for (const Json& c : *statuses) {
      const std::string reason = kube::StringAt(c, "state.waiting.reason");
      if (StuckWaiting(reason)) {
        h.failed = true;
        h.problem = absl::StrCat("container ", kube::StringAt(c, "name"), " ", reason);
        const std::string message = kube::StringAt(c, "state.waiting.message");
        if (!message.empty()) absl::StrAppend(&h.problem, ": ", message);
        return h;
      }
    }
  }
  h.problem = phase.empty() ? "pod not scheduled yet" : absl::StrCat("pod ", phase);
  return h;
}

ServiceState ComputeServiceState(const std::vector<NamedWorker>& workers) {
  ServiceState s;
  std::vector<std::string> problems;
  for (const NamedWorker& w : workers) {
    if (w.health.available) ++s.active;
    if (w.health.failed) ++s.failed;
    if (!w.health.available) problems.push_back(Describe(w));
  }
  const int total = static_cast<int>(workers.size());
  if (s.failed > 0) {
    s.phase = std::string(api::service_phases::kFailed);
    s.reason = std::string(service_reasons::kWorkerFailed);
  } else if (total > 0 && s.active == total) {
    s.phase = std::string(api::service_phases::kRunning);
    s.reason = std::string(service_reasons::kWorkersAvailable);
  } else {
    s.phase = std::string(api::service_phases::kPending);
    s.reason = std::string(service_reasons::kWorkersNotAvailable);
  }
  s.message = problems.empty() ? absl::StrCat("all ", total, " workers available")
                               : absl::StrCat(s.active, " of ", total, " workers available; ",
                                              absl::StrJoin(problems, "; "));
  return s;
}

}  // namespace nereid::gm
