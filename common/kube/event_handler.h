#pragma once

// What informers tell their handlers (client-go tools/cache ResourceEventHandler).
//
// Handlers run on the informer's dispatch thread, one notification at a time and in order. They
// must be quick and must not block or call the API server: compute a key and add it to a workqueue
// (that is all Controller::EnqueueHandler does). Controllers are level-based — the reconciler reads
// the current state from a lister — so handlers should not branch on what changed.

#include <functional>
#include <string>
#include <variant>

#include "common/kube/object.h"

namespace nereid::kube {

// A delete the informer did not see happen (it was missed while the watch was down and noticed on
// a relist): `object` is the last state the cache knew, which may be stale.
struct DeletedFinalStateUnknown {
  std::string key;
  ObjectPtr object;
};

// What OnDelete receives: the final object, or a tombstone. Handlers must accept both.
using DeletedObject = std::variant<ObjectPtr, DeletedFinalStateUnknown>;

// The object in either case (for a tombstone, the last known state).
ObjectPtr LastKnownState(const DeletedObject& deleted);
std::string DeletedKey(const DeletedObject& deleted);

// An update that is no news: the informer's periodic resync (or a relist) re-delivering the object
// as cached, the same object or resourceVersion (client-go's test for a resync). Handlers queue
// such keys behind news (Controller::Enqueue's `resync`).
bool IsResync(const ObjectPtr& old_object, const ObjectPtr& new_object);

struct ResourceEventHandlerFuncs {
  std::function<void(const ObjectPtr& object)> on_add;
  // Also called with old == new (same object) on every resync (unless on_resync is set) and for
  // every object of a relist.
  std::function<void(const ObjectPtr& old_object, const ObjectPtr& new_object)> on_update;
  std::function<void(const DeletedObject& deleted)> on_delete;
  // Optional. When set, a resync's replay calls it with the object's key instead of on_update: the
  // handler says it needs no more than the key (a workqueue's), so an informer whose handlers all
  // set it replays without reading an object, which a packed cache would have to decode. A
  // relist's updates still go to on_update.
  std::function<void(const std::string& key)> on_resync;
};

}  // namespace nereid::kube
