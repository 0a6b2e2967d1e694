#pragma once

// Gang scheduling through Volcano PodGroups (scheduling.volcano.sh/v1beta1).
//
// GangAvailability answers "does this cluster serve PodGroups?" through API discovery
// (KubeClient::IsServed), cached for `ttl` on the Clock so a reconcile does not ask every time but
// a Volcano installed later is noticed. Discovery errors are returned (the reconcile retries), not
// cached.
//
// PodGroupAdmitted: Volcano sets status.phase to Inqueue once the whole gang fits; pods are created
// only then (Volcano's own job controller and training-operator with Volcano do the same; pods
// created before admission would hold resources while the rest of the gang cannot start). Pending
// or no phase yet → wait.

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/kube/client.h"
#include "common/time/clock.h"

namespace nereid::job {

class GangAvailability {
 public:
  GangAvailability(kube::KubeClient* client, Clock* clock, absl::Duration ttl = absl::Seconds(30));

  absl::StatusOr<bool> PodGroupsServed();
  // Forgets the cached answer (e.g. after a PodGroup call returned NotFound for the resource).
  void Invalidate();

 private:
  kube::KubeClient* const client_;
  Clock* const clock_;
  const absl::Duration ttl_;
  absl::Mutex mu_;
  bool known_ ABSL_GUARDED_BY(mu_) = false;
  bool served_ ABSL_GUARDED_BY(mu_) = false;
  absl::Time checked_at_ ABSL_GUARDED_BY(mu_);
};

// Whether Volcano admitted the PodGroup (phase Inqueue, Running or Unknown).
bool PodGroupAdmitted(const kube::Json& pod_group);

}  // namespace nereid::job
