#pragma once

// The three patch formats the API server accepts on PATCH:
//   merge      application/merge-patch+json       RFC 7386
//   json       application/json-patch+json        RFC 6902
//   strategic  application/strategic-merge-patch+json   built-in kinds only: lists of objects
//              merge by their patch merge key (containers by name, ports by containerPort, ...)
//              and the directives kubectl sends: $patch (merge|replace|delete),
//              $setElementOrder/<list>, $retainKeys, $deleteFromPrimitiveList/<list>.
// Errors: a malformed patch is BadRequest; a JSON patch op that cannot apply (bad path, failed
// "test") is Invalid (422), as upstream.

#include "absl/status/statusor.h"
#include "common/kube/object.h"

namespace nereid::devapi {

using kube::Json;

absl::StatusOr<Json> ApplyMergePatch(const Json& target, const Json& patch);
absl::StatusOr<Json> ApplyJsonPatch(const Json& target, const Json& patch);
absl::StatusOr<Json> ApplyStrategicMergePatch(const Json& target, const Json& patch);

}  // namespace nereid::devapi
