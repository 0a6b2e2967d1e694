#pragma once

// The status fields Sedna's job kinds that run on the common job library (FederatedLearningJob,
// VideoAnalyticsJob, ReidJob) share, from the library's JobStatus: pure functions on the status
// JSON (their reconcile writes them with WriteLibraryJobStatus, status_writer.h).

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/api/common_types.h"
#include "common/job/expectations.h"
#include "common/job/job_status.h"
#include "common/job/pod_builder.h"
#include "common/kube/client.h"
#include "common/kube/object.h"
#include "common/kube/resource.h"
#include "globalmanager/controllers/status_writer.h"

namespace nereid::gm {

// The library status embedded at status.<field>; a missing or malformed one reads as a fresh
// status (someone edited it: the job restarts from what could be read).
job::JobStatus ReadEmbeddedLibraryStatus(const kube::Json& object, std::string_view field);

// Sedna's phase for the library's: Restarting shows as Running, none as Pending; Pending, Running,
// Succeeded, Failed and Suspended are the same words.
std::string_view SednaJobPhase(std::string_view library_phase);

// active, succeeded, failed (pods in those states; Sedna counts a Pending pod of an unfinished job
// as active, the library only Running ones), restarts, startTime and completionTime (erased when
// the library has none).
void PutLibraryJobCounts(const job::JobStatus& js, kube::Json* status);

// Appends `condition` to status.conditions as a bounded history (api::AppendCondition); writes
// the list only when it changed.
void AppendSednaCondition(api::Condition condition, absl::Time now, kube::Json* status);

}  // namespace nereid::gm
