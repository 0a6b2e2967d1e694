#pragma once

// DistributedJob (sedna.io/v1alpha1, short name dj, category sedna): the common job library as a
// kind of its own — spec.runPolicy + spec.tasks[], status as JobStatus. Its controller
// (globalmanager/controllers/distributed_job_controller.h) is JobReconciler with no special cases.

#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/common_types.h"
#include "common/job/job_spec.h"
#include "common/job/job_status.h"
#include "common/kube/errors.h"
#include "common/kube/object.h"
#include "common/kube/resource.h"

namespace nereid::job {

inline constexpr std::string_view kDistributedJobKind = "DistributedJob";

// distributedjobs.sedna.io
const kube::Resource& DistributedJobs();

struct DistributedJob {
  api::ObjectMeta metadata;
  JobSpec spec;
  JobStatus status;

  // Type errors (wrong JSON types, unknown enum values) → InvalidArgument with every cause
  // (kube::Causes()); missing fields are Validate()'s business.
  static absl::StatusOr<DistributedJob> FromJson(const kube::Json& object);
  kube::Json ToJson() const;
  kube::Json SpecToJson() const;
  kube::Json StatusToJson() const { return status.ToJson(); }
  // ValidateJobSpec with this job's name.
  std::vector<kube::StatusCause> Validate() const;
};

}  // namespace nereid::job
