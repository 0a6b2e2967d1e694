#pragma once

// How a job kind writes the JobStatus its JobReconciler computed: JSON patches through the status
// subresource, without a resourceVersion precondition. A job's status carries counts only the
// reconcile that observed them can know (a pod recreated after a failure counts as a restart);
// a conflict-checked write that lost to a concurrent spec edit would drop them, and the next pass
// no longer sees the failed pod. The workqueue never runs one key twice at once, so no other
// writer of these fields races the patch.

#include <string_view>

#include "absl/status/status.h"
#include "common/job/expectations.h"
#include "common/kube/client.h"
#include "common/kube/object.h"
#include "common/kube/resource.h"

namespace nereid::job {

// Writes `status_json` as the object's whole .status through the status subresource (a JSON patch
// "add /status": no resourceVersion precondition, so a concurrent spec edit cannot make the
// controller lose a restart it counted; the workqueue never runs one key twice at once) and raises
// the status fence in `expectations`.
absl::Status WriteJobStatus(kube::KubeClient* client, const kube::Resource& resource,
                            const kube::Json& object, const kube::Json& status_json,
                            Expectations* expectations);

// The keys of .status that JobStatus::ToJson owns (phase, conditions, replicaStatuses, ...).
bool IsJobStatusKey(std::string_view key);

// Like WriteJobStatus, but leaves the status keys the library does not own alone (a kind's own
// status fields, written by someone else, e.g. DistributedJob's workerReports written from worker
// reports): one JSON patch "add /status/<key>" per key of `status_json`, "remove" for the owned
// keys `object`'s status has and `status_json` lacks; "add /status" when `object` has no status
// object. A key the cache shows but the server no longer has makes the patch fail (Invalid); the
// caller's retry re-reads the cache.
absl::Status WriteJobStatusFields(kube::KubeClient* client, const kube::Resource& resource,
                                  const kube::Json& object, const kube::Json& status_json,
                                  Expectations* expectations);

}  // namespace nereid::job
