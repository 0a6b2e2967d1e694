#pragma once

// Helpers for deletion and ownerReference garbage collection (the Store's side of it is in
// garbage_collection.cc): finalizers and owner references as they appear in object metadata.

#include <string>
#include <vector>

#include "common/kube/object.h"

namespace nereid::devapi {

using kube::Json;

// The finalizer an owner deleted with propagationPolicy=Foreground keeps until its blocking
// dependents are gone.
inline constexpr char kForegroundFinalizer[] = "foregroundDeletion";

// metadata.finalizers (non-string entries skipped).
std::vector<std::string> Finalizers(const Json& obj);
// Sets metadata.finalizers; an empty list removes the field.
void SetFinalizers(Json& obj, const std::vector<std::string>& finalizers);

// Whether one of obj's ownerReferences names `uid`.
bool HasOwner(const Json& obj, const std::string& uid);
// Drops the ownerReferences naming `uid`; removes the field when none remain.
void RemoveOwnerRef(Json& obj, const std::string& uid);

}  // namespace nereid::devapi
