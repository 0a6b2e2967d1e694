#include "globalmanager/controllers/controller_events.h"

namespace nereid::gm {

void RecordEvent(const ControllerContext& context, const kube::Resource& resource,
                 const kube::Json& object, kube::EventType type, std::string_view reason,
                 std::string_view message) {
  if (context.events == nullptr) return;
  kube::ObjectReference ref = kube::ObjectReference::FromObject(object);
  if (ref.kind.empty()) ref.kind = resource.kind;
  if (ref.api_version.empty()) ref.api_version = resource.ApiVersion();
  context.events->Record(ref, type, reason, message);
}

}  // namespace nereid::gm
