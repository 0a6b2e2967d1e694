#pragma once

// The guard before re-creating a child that is missing from the cache. Deleting an owner
// garbage-collects its children, and their deletions can reach a controller before the owner's
// own: re-creating them from the stale cache would leave orphans. So a child that may have been
// collected is only re-created after a live read shows the owner (this uid) still exists and is
// not being deleted. That read is needed only once the children may have existed: never for an
// owner's first creation, which is most of the creates.

#include "absl/status/statusor.h"
#include "common/kube/client.h"
#include "common/kube/object.h"
#include "common/kube/resource.h"

namespace nereid::gm {

// What the cache shows of the children an owner's plan wants.
struct ChildPresence {
  int present = 0;
  int missing = 0;
};

// Whether a missing child must wait for OwnerStillExists before it is re-created: some child is
// missing and the owner may have lost children to the garbage collector — it carries our status
// (the status write follows the first creation of the children; before it none can have existed),
// or some of its children exist (a pass working from a copy of the owner older than that write).
bool NeedsLivenessCheck(const kube::Json& owner, ChildPresence children);

// Whether `owner` (this uid) still exists and is not being deleted, asked of the API server.
absl::StatusOr<bool> OwnerStillExists(kube::KubeClient& client, const kube::Resource& resource,
                                      const kube::Json& owner);

}  // namespace nereid::gm
