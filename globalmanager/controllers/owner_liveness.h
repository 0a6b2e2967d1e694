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

// Whether `owner` may have lost children to the garbage collector: it carries our status (the
// status write follows the first creation of the children; before it none can have existed).
bool MayHaveLostChildren(const kube::Json& owner);

// Whether `owner` (this uid) still exists and is not being deleted, asked of the API server.
absl::StatusOr<bool> OwnerStillExists(kube::KubeClient& client, const kube::Resource& resource,
                                      const kube::Json& owner);

}  // namespace nereid::gm
