#pragma once

// DeleteExpected: how a job controller deletes one of its children (a pod, a Service) so that its
// next reconcile waits until the informer saw the deletion (Expectations), and never deletes a
// newer object that took the same name (a uid precondition).

#include <string>

#include "absl/status/status.h"
#include "common/job/expectations.h"
#include "common/kube/client.h"
#include "common/kube/object.h"
#include "common/kube/resource.h"

namespace nereid::job {

// Deletes `child` of the job `key`. The client's status is returned as is; on an error (NotFound
// too: the child is gone already) the expected deletion is withdrawn again.
absl::Status DeleteExpected(kube::KubeClient& client, Expectations& expectations,
                            const std::string& key, const kube::Resource& resource,
                            const kube::Json& child);

}  // namespace nereid::job
