#pragma once

// What an informer may drop from an object before caching it (client-go's
// SharedInformer.SetTransform and TransformStripManagedFields). A real API server returns every
// object with `metadata.managedFields` (one entry per manager, each a set of field paths) and, for
// objects created with `kubectl apply`, the whole manifest again in the
// `kubectl.kubernetes.io/last-applied-configuration` annotation. Controllers read neither, and in
// a cache of 100,000 objects they can be most of its memory.
//
// Safe to drop:
//  - managedFields always: an update (PUT) that omits them leaves the server's unchanged (by
//    design, so that clients unaware of them never reset them);
//  - the last-applied annotation only from objects this process never PUTs whole: a PUT of a
//    cached copy without it would remove it from the server. Status writes are fine (the status
//    subresource ignores metadata).

#include <functional>

#include "common/kube/object.h"

namespace nereid::kube {

// Applied to every object a reflector lists or watches, before it becomes the cache's const copy.
using ObjectTransform = std::function<void(Json& object)>;

inline constexpr std::string_view kLastAppliedAnnotation =
    "kubectl.kubernetes.io/last-applied-configuration";

void DropManagedFields(Json& object);
// DropManagedFields, and the last-applied annotation.
void DropManagedFieldsAndLastApplied(Json& object);

}  // namespace nereid::kube
