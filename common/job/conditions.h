#pragma once

// The condition algebra of training-operator's setCondition/filterOutCondition, with its flaws
// fixed (README.md, "Decisions"):
//   - at most one condition per type; a changed condition moves to the end of the list;
//   - same type, status and reason → only the message (and lastUpdateTime) may change; a new status
//     sets lastTransitionTime, a new reason with the same status keeps it;
//   - Running and Restarting exclude each other: setting one True removes the other;
//   - Succeeded and Failed are absorbing: once either is True nothing changes any more, so they are
//     never both True (upstream only makes Failed absorbing);
//   - setting Succeeded or Failed True turns a Running (or Restarting) condition False, so a
//     finished job never shows Running=True.

#include <string_view>

#include "absl/time/time.h"
#include "common/job/job_status.h"

namespace nereid::job {

// Applies one condition at `now`. Returns whether the list changed.
bool SetCondition(JobStatus* status, std::string_view type, std::string_view condition_status,
                  std::string_view reason, std::string_view message, absl::Time now);

// Removes the condition of `type` if present (finished jobs excepted). Returns whether it changed.
bool RemoveCondition(JobStatus* status, std::string_view type);

// The phase the conditions describe: Failed, Succeeded, Suspended, Restarting, Running or Pending.
std::string_view PhaseOf(const JobStatus& status);

}  // namespace nereid::job
