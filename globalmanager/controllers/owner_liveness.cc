#include "globalmanager/controllers/owner_liveness.h"

#include "common/kube/errors.h"

namespace nereid::gm {

bool NeedsLivenessCheck(const kube::Json& owner, ChildPresence children) {
  return children.missing > 0 &&
         (children.present > 0 || kube::FindPath(owner, "status.observedGeneration") != nullptr);
}

absl::StatusOr<bool> OwnerStillExists(kube::KubeClient& client, const kube::Resource& resource,
                                      const kube::Json& owner) {
  absl::StatusOr<kube::Json> live =
      client.Get(resource, kube::Namespace(owner), kube::Name(owner));
  if (!live.ok()) {
    if (absl::IsNotFound(live.status())) return false;
    return live.status();
  }
  return kube::Uid(*live) == kube::Uid(owner) && !kube::IsBeingDeleted(*live);
}

}  // namespace nereid::gm
