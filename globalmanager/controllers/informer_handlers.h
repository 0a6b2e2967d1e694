#pragma once

// The event handlers a controller puts on the informers of objects it only reads: the objects its
// own kind refers to (Models, Datasets) and Nodes. Both ignore the updates that cannot change a
// reconcile's outcome, so a Dataset's count report or a Node heartbeat does not enqueue every
// object of the kind.

#include <functional>

#include "common/kube/event_handler.h"
#include "common/kube/object.h"

namespace nereid::gm {

// Calls `changed(object)` when a referenced object appears, goes, or changes its spec (or is
// re-created under the same name); status writes are ignored.
kube::ResourceEventHandlerFuncs OnSpecChange(std::function<void(const kube::ObjectPtr&)> changed);

// Calls `changed()` when a Node appears, goes, or changes what placement reads of it (labels,
// taints, deletion; placement.h). `relevant`, when set, limits this to Nodes it accepts (on an
// update, either the old or the new state).
kube::ResourceEventHandlerFuncs OnPlacementChange(
    std::function<void()> changed,
    std::function<bool(const kube::ObjectPtr&)> relevant = nullptr);

}  // namespace nereid::gm
