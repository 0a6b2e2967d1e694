#include "common/job/distributed_job.h"

#include "common/api/object_validation.h"
#include "common/api/validation.h"
#include "common/job/job_validation.h"

namespace nereid::job {

using kube::Json;

namespace {

absl::StatusOr<std::vector<kube::StatusCause>> ValidateDistributedJobObject(const Json& object) {
  absl::StatusOr<DistributedJob> parsed = DistributedJob::FromJson(object);
  if (!parsed.ok()) return parsed.status();
  return parsed->Validate();
}

// api::ValidateObject covers DistributedJob wherever this file is linked (see object_validation.h).
[[maybe_unused]] const bool kValidatorRegistered =
    api::RegisterObjectValidator(kDistributedJobKind, &ValidateDistributedJobObject);

}  // namespace

const kube::Resource& DistributedJobs() {
  static const kube::Resource* const resource = new kube::Resource{
      "sedna.io", "v1alpha1", "distributedjobs", std::string(kDistributedJobKind), true};
  return *resource;
}

absl::StatusOr<DistributedJob> DistributedJob::FromJson(const Json& object) {
  if (!object.is_object()) {
    return absl::InvalidArgumentError("a DistributedJob must be a JSON object");
  }
  api::FieldReader r;
  DistributedJob job;
  api::CheckTypeMeta(object, kDistributedJobKind, &r);
  job.metadata = api::ObjectMeta::FromJson(object);
  if (const Json* spec = r.Object(object, "spec", "")) {
    job.spec.run_policy = ReadRunPolicy(*spec, "runPolicy", "spec", &r);
    job.spec.tasks = ReadTasks(*spec, "tasks", "spec", &r);
  }
  if (const Json* status = r.Object(object, "status", "")) {
    job.status = ReadJobStatus(*status, "status", &r);
  }
  if (!r.ok()) {
    return api::InvalidObjectError(kDistributedJobKind, job.metadata.name, r.TakeCauses());
  }
  return job;
}

Json DistributedJob::SpecToJson() const {
  Json out = Json::object();
  Json policy = spec.run_policy.ToJson();
  if (!policy.empty()) out["runPolicy"] = std::move(policy);
  out["tasks"] = TasksToJson(spec.tasks);
  return out;
}

Json DistributedJob::ToJson() const {
  Json json = api::ObjectEnvelope(kDistributedJobKind, metadata);
  json["spec"] = SpecToJson();
  json["status"] = status.ToJson();
  return json;
}

std::vector<kube::StatusCause> DistributedJob::Validate() const {
  return ValidateJobSpec(spec, metadata.name);
}

}  // namespace nereid::job
