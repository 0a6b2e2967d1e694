#include "common/job/gang.h"

#include "common/kube/resource.h"

namespace nereid::job {

GangAvailability::GangAvailability(kube::KubeClient* client, Clock* clock, absl::Duration ttl)
    : client_(client), clock_(clock), ttl_(ttl) {}

absl::StatusOr<bool> GangAvailability::PodGroupsServed() {
  absl::Time now = clock_->Now();
  {
    absl::MutexLock lock(&mu_);
    if (known_ && now - checked_at_ < ttl_) return served_;
  }
  // Asked without the lock: discovery is an HTTP call.
  absl::StatusOr<bool> served = client_->IsServed(kube::resources::PodGroups());
  if (!served.ok()) return served.status();
  absl::MutexLock lock(&mu_);
  known_ = true;
  served_ = *served;
  checked_at_ = now;
  return *served;
}

void GangAvailability::Invalidate() {
  absl::MutexLock lock(&mu_);
  known_ = false;
}

bool PodGroupAdmitted(const kube::Json& pod_group) {
  std::string phase = kube::StringAt(pod_group, "status.phase");
  return phase == "Inqueue" || phase == "Running" || phase == "Unknown";
}

}  // namespace nereid::job
