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

}  // namespace nereid::kube
