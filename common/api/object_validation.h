#pragma once

// Kind-generic entry point: parse and validate any sedna.io object by its `kind`. For tools that
// handle objects of every kind (devapiserver admission, manifest checks in tests, kubectl-like
// linting); controllers use their kind's FromJson()/Validate() directly.

#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/kube/errors.h"
#include "common/kube/object.h"

namespace nereid::api {

// Parses `object` by its kind and returns its Validate() causes (empty when valid). Errors:
// InvalidArgument when the object does not parse (type errors; kube::Causes() lists them),
// Unimplemented when the kind is not a sedna.io kind Nereid knows.
//
// Kinds defined outside common/api plug in with RegisterObjectValidator (common/api cannot depend
// on their libraries): DistributedJob is registered by common/job (distributed_job.cc, at static
// initialization), so ValidateObject covers it in every program that links nereid_job and uses
// job::DistributedJobs() or job::DistributedJob.
absl::StatusOr<std::vector<kube::StatusCause>> ValidateObject(const kube::Json& object);

// Same contract as ValidateObject, for one kind.
using ObjectValidator = absl::StatusOr<std::vector<kube::StatusCause>> (*)(const kube::Json&);

// Makes ValidateObject dispatch `kind` to `validator` (the kinds above cannot be replaced; a
// second registration of a kind replaces the first). Thread-safe. Returns true (so it can
// initialize a namespace-scope constant).
bool RegisterObjectValidator(std::string_view kind, ObjectValidator validator);

}  // namespace nereid::api
