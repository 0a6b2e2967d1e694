#include "globalmanager/controllers/informer_handlers.h"

#include <utility>

namespace nereid::gm {
namespace {

bool SamePath(const kube::Json& a, const kube::Json& b, const char* path) {
  const kube::Json* x = kube::FindPath(a, path);
  const kube::Json* y = kube::FindPath(b, path);
  if (x == nullptr || y == nullptr) return x == y;
  return *x == *y;
}

bool SameSpec(const kube::Json& a, const kube::Json& b) {
  return SamePath(a, b, "spec") && kube::Uid(a) == kube::Uid(b) &&
         kube::Generation(a) == kube::Generation(b);
}

// Only what placement reads: a Node heartbeat or status change is not news.
bool SamePlacementFields(const kube::Json& a, const kube::Json& b) {
  return SamePath(a, b, "metadata.labels") && SamePath(a, b, "spec.taints") &&
         SamePath(a, b, "metadata.deletionTimestamp");
}

}  // namespace

kube::ResourceEventHandlerFuncs OnSpecChange(std::function<void(const kube::ObjectPtr&)> changed) {
  kube::ResourceEventHandlerFuncs funcs;
  funcs.on_add = changed;
  funcs.on_update = [changed](const kube::ObjectPtr& before, const kube::ObjectPtr& after) {
    if (!SameSpec(*before, *after)) changed(after);
  };
  funcs.on_delete = [changed](const kube::DeletedObject& deleted) {
    if (kube::ObjectPtr last = kube::LastKnownState(deleted)) changed(last);
  };
  funcs.on_resync = [](const std::string&) {};  // the spec is as cached: no change
  return funcs;
}

kube::ResourceEventHandlerFuncs OnPlacementChange(
    std::function<void()> changed, std::function<bool(const kube::ObjectPtr&)> relevant) {
  auto counts = [relevant](const kube::ObjectPtr& node) {
    return relevant == nullptr || (node != nullptr && relevant(node));
  };
  kube::ResourceEventHandlerFuncs funcs;
  funcs.on_add = [changed, counts](const kube::ObjectPtr& node) {
    if (counts(node)) changed();
  };
  funcs.on_update = [changed, counts](const kube::ObjectPtr& before,
                                      const kube::ObjectPtr& after) {
    if ((counts(before) || counts(after)) && !SamePlacementFields(*before, *after)) changed();
  };
  funcs.on_delete = [changed, counts](const kube::DeletedObject& deleted) {
    if (counts(kube::LastKnownState(deleted))) changed();
  };
  funcs.on_resync = [](const std::string&) {};  // the Node is as cached: no change
  return funcs;
}

}  // namespace nereid::gm
