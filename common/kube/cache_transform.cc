#include "common/kube/cache_transform.h"

#include <string>

namespace nereid::kube {

void DropManagedFields(Json& object) {
  auto metadata = object.find("metadata");
  if (metadata != object.end() && metadata->is_object()) metadata->erase("managedFields");
}

void DropManagedFieldsAndLastApplied(Json& object) {
  DropManagedFields(object);
  auto metadata = object.find("metadata");
  if (metadata == object.end() || !metadata->is_object()) return;
  auto annotations = metadata->find("annotations");
  if (annotations == metadata->end() || !annotations->is_object()) return;
  annotations->erase(std::string(kLastAppliedAnnotation));
}

}  // namespace nereid::kube
