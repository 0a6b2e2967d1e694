#include "common/kube/event_handler.h"

namespace nereid::kube {

ObjectPtr LastKnownState(const DeletedObject& deleted) {
  if (const auto* tombstone = std::get_if<DeletedFinalStateUnknown>(&deleted)) {
    return tombstone->object;
  }
  return std::get<ObjectPtr>(deleted);
}

std::string DeletedKey(const DeletedObject& deleted) {
  if (const auto* tombstone = std::get_if<DeletedFinalStateUnknown>(&deleted)) {
    return tombstone->key;
  }
  const ObjectPtr& object = std::get<ObjectPtr>(deleted);
  return object ? Key(*object) : std::string();
}

bool IsResync(const ObjectPtr& old_object, const ObjectPtr& new_object) {
  if (old_object == new_object) return true;
  if (old_object == nullptr || new_object == nullptr) return false;
  const std::string version = ResourceVersion(*new_object);
  return !version.empty() && version == ResourceVersion(*old_object);
}

}  // namespace nereid::kube
