#pragma once

// Kind-generic entry point: parse and validate any sedna.io object by its `kind`. For tools that
// handle objects of every kind (devapiserver admission, manifest checks in tests, kubectl-like
// linting); controllers use their kind's FromJson()/Validate() directly.

#include <vector>

#include "absl/status/statusor.h"
#include "common/kube/errors.h"
#include "common/kube/object.h"

namespace nereid::api {

// Parses `object` by its kind and returns its Validate() causes (empty when valid). Errors:
// InvalidArgument when the object does not parse (type errors; kube::Causes() lists them),
// Unimplemented when the kind is not a sedna.io kind Nereid knows.
absl::StatusOr<std::vector<kube::StatusCause>> ValidateObject(const kube::Json& object);

}  // namespace nereid::api
