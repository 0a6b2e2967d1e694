#pragma once

// How a kind whose status is the library's JobStatus writes it: its controller's status write
// (gm::WriteStatus, a read-modify-write with conflict retries) applies PutJobStatusFields to the
// status it read, so the keys the library does not own — a kind's own fields written by someone
// else, e.g. DistributedJob's status.workerReports written from worker reports — are left as they
// are. The mutator runs again on a fresh read after a conflict, so the counts only the pass could
// observe (a pod recreated after a failure counts as a restart) survive a concurrent spec edit.

#include <string_view>

#include "common/kube/object.h"

namespace nereid::job {

// The keys of .status that JobStatus::ToJson owns (phase, conditions, replicaStatuses, ...).
bool IsJobStatusKey(std::string_view key);

// Sets every key of `status_json` (a JobStatus::ToJson) in `status` and erases the keys the
// library owns that `status_json` lacks; other keys stay. A `status` that is not an object
// becomes `status_json`.
void PutJobStatusFields(const kube::Json& status_json, kube::Json* status);

}  // namespace nereid::job
