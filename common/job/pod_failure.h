#pragma once

// What a Failed pod means for its job, by the task's restartPolicy (as training-operator):
//   Always, OnFailure  → retry (the pod is deleted and recreated under the same name);
//   ExitCode           → retry when the exit code is >= 128 (killed by a signal: OOM, preemption,
//                        SIGTERM) or when there is no exit code at all (evicted, node lost, never
//                        started); 1-127 is a permanent error;
//   Never              → permanent.
// The exit code is the first container's (spec order) last terminated state; training-operator
// reads a framework-named container and uses the magic 0xbeef when it has none — we say "no exit
// code" instead, which is retryable as there.

#include <cstdint>
#include <optional>
#include <string>

#include "common/job/job_spec.h"
#include "common/kube/object.h"

namespace nereid::job {

struct PodFailure {
  bool retryable = false;
  std::optional<int> exit_code;
  std::string reason;  // pod status.reason (e.g. "Evicted") or the container's terminated reason.
  // "exit code 1 (Error)", "evicted: The node was low on memory", "no exit code"
  std::string Describe() const;
};

PodFailure ClassifyFailedPod(const kube::Json& pod, RestartPolicy policy);

// The exit code of the first container's terminated (or last terminated) state, if any.
std::optional<int> ExitCodeOf(const kube::Json& pod);

// Σ restartCount over the pod's init and regular container statuses.
int32_t ContainerRestarts(const kube::Json& pod);

// status.phase, "Pending" when absent (a pod the API server has not defaulted yet).
std::string PodPhase(const kube::Json& pod);

}  // namespace nereid::job
