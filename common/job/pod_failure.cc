#include "common/job/pod_failure.h"

#include "absl/strings/str_cat.h"

namespace nereid::job {

using kube::Json;

namespace {

const Json* TerminatedState(const Json& container_status) {
  for (const char* which : {"state", "lastState"}) {
    const Json* t = kube::FindPath(container_status, std::string(which) + ".terminated");
    if (t != nullptr && t->is_object()) return t;
  }
  return nullptr;
}

const Json* FirstContainerStatus(const Json& pod) {
  const Json* statuses = kube::FindPath(pod, "status.containerStatuses");
  if (statuses == nullptr || !statuses->is_array() || statuses->empty()) return nullptr;
  std::string first;
  const Json* containers = kube::FindPath(pod, "spec.containers");
  if (containers != nullptr && containers->is_array() && !containers->empty() &&
      (*containers)[0].is_object()) {
    first = (*containers)[0].value("name", std::string());
  }
  for (const Json& s : *statuses) {
    if (s.is_object() && s.value("name", std::string()) == first) return &s;
  }
  return &(*statuses)[0];
}

}  // namespace

std::string PodFailure::Describe() const {
  if (exit_code.has_value()) {
    return reason.empty() ? absl::StrCat("exit code ", *exit_code)
                          : absl::StrCat("exit code ", *exit_code, " (", reason, ")");
  }
  return reason.empty() ? "no exit code" : absl::StrCat(reason, ", no exit code");
}

std::optional<int> ExitCodeOf(const Json& pod) {
  const Json* status = FirstContainerStatus(pod);
  if (status == nullptr) return std::nullopt;
  const Json* terminated = TerminatedState(*status);
  if (terminated == nullptr) return std::nullopt;
  auto code = terminated->find("exitCode");
  if (code == terminated->end() || !code->is_number_integer()) return std::nullopt;
  return code->get<int>();
}

PodFailure ClassifyFailedPod(const Json& pod, RestartPolicy policy) {
  PodFailure failure;
  failure.exit_code = ExitCodeOf(pod);
  failure.reason = kube::StringAt(pod, "status.reason");
  if (failure.reason.empty()) {
    if (const Json* status = FirstContainerStatus(pod); status != nullptr) {
      if (const Json* t = TerminatedState(*status); t != nullptr) {
        failure.reason = t->value("reason", std::string());
      }
    }
  }
  switch (policy) {
    case RestartPolicy::kAlways:
    case RestartPolicy::kOnFailure:
      failure.retryable = true;
      break;
    case RestartPolicy::kNever:
      failure.retryable = false;
      break;
    case RestartPolicy::kExitCode:
      failure.retryable =
          !failure.exit_code.has_value() || *failure.exit_code >= 128 || *failure.exit_code < 0;
      break;
  }
  return failure;
}

int32_t ContainerRestarts(const Json& pod) {
  int64_t total = 0;
  for (const char* list : {"status.initContainerStatuses", "status.containerStatuses"}) {
    const Json* statuses = kube::FindPath(pod, list);
    if (statuses == nullptr || !statuses->is_array()) continue;
    for (const Json& s : *statuses) {
      if (!s.is_object()) continue;
      auto n = s.find("restartCount");
      if (n != s.end() && n->is_number_integer() && n->get<int64_t>() > 0)
        total += n->get<int64_t>();
    }
  }
  return static_cast<int32_t>(std::min<int64_t>(total, 1 << 30));
}

std::string PodPhase(const Json& pod) {
  std::string phase = kube::StringAt(pod, "status.phase");
  return phase.empty() ? "Pending" : phase;
}

}  // namespace nereid::job
