#pragma once

// Semantic checks of a JobSpec, with field paths (the CRD schema checks types, enums and bounds; a
// CEL rule rejects duplicate typed tasks on real clusters, but devapiserver and older clusters do
// not evaluate CEL, so the controller checks everything again):
//   - at least one task; names required for type none, DNS-1123 labels, unique;
//   - at most one task each of learner, collector and evaluator (DI-orchestrator);
//   - replicas >= 0; every task has a pod template with containers;
//   - pod names "<job>-<task>-<replicas-1>" are DNS-1123 labels (they are pod hostnames), the job
//     name is a DNS-1035 label (it names the headless Service);
//   - activeDeadlineSeconds >= 1; minAvailable <= Σ replicas.

#include <string_view>
#include <vector>

#include "common/job/job_spec.h"
#include "common/kube/errors.h"

namespace nereid::job {

// `spec_path` is where the job's spec lives ("spec"); the run policy and tasks are at
// "<spec_path>.runPolicy" and "<spec_path>.tasks".
std::vector<kube::StatusCause> ValidateJobSpec(const JobSpec& spec, std::string_view job_name,
                                               std::string_view spec_path = "spec");

// Lower-case RFC 1123 label (at most 63 characters).
bool IsDnsLabel(std::string_view name);
// RFC 1035 label: an RFC 1123 label starting with a letter.
bool IsDns1035Label(std::string_view name);

}  // namespace nereid::job
