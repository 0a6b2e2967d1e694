#pragma once

// DeleteExpected: how a job controller deletes one of its children (a pod, a Service) so that its
// next reconcile waits until the informer saw the deletion (Expectations), and never deletes a
// newer object that took the same name (a uid precondition). StalePods + DeletePodsExpected: the
// restart of pods built from an older spec.

#include <string>
#include <string_view>
#include <vector>

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

// The pods built from something other than `hash`: those whose annotation `annotation` is set
// and differs. A terminating pod is on its way out already (its slot waits for it) and is left
// out, so it is not restarted, or counted as a restart, twice.
std::vector<kube::ObjectPtr> StalePods(const std::vector<kube::ObjectPtr>& pods,
                                       std::string_view annotation, std::string_view hash);

// Deletes every pod of `pods` that is not being deleted already with DeleteExpected; returns how
// many it deleted. The first error other than NotFound goes to `first_error` when that is OK.
int DeletePodsExpected(kube::KubeClient& client, Expectations& expectations,
                       const std::string& key, const std::vector<kube::ObjectPtr>& pods,
                       absl::Status* first_error);

}  // namespace nereid::job
