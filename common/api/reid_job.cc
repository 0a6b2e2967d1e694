#include "common/api/reid_job.h"

#include "common/api/sedna_contract.h"
#include "common/api/validation.h"

namespace nereid::api {

using kube::Json;

Json ReidJobSpec::ToJson() const {
  Json json = Json::object();
  job.ToJson(&json);
  if (kafka_support.has_value()) json["kafkaSupport"] = *kafka_support;
  return json;
}

absl::StatusOr<ReidJob> ReidJob::FromJson(const Json& object) {
  if (!object.is_object()) return absl::InvalidArgumentError("a ReidJob must be a JSON object");
  FieldReader r;
  ReidJob job;
  CheckTypeMeta(object, kinds::kReidJob, &r);
  job.metadata = ObjectMeta::FromJson(object);
  if (const Json* spec = r.Object(object, "spec", "")) {
    job.spec.job = ReadInlineJobSpec(*spec, &r);
    job.spec.kafka_support = r.Bool(*spec, "kafkaSupport", "spec");
  }
  if (const Json* status = r.Object(object, "status", "")) {
    job.status = ReadInferenceJobStatus(*status, &r);
  }
  if (!r.ok()) return InvalidObjectError(kinds::kReidJob, job.metadata.name, r.TakeCauses());
  return job;
}

Json ReidJob::ToJson() const {
  Json json = ObjectEnvelope(kinds::kReidJob, metadata);
  json["spec"] = spec.ToJson();
  json["status"] = status.ToJson();
  return json;
}

std::vector<kube::StatusCause> ReidJob::Validate() const {
  Causes out;
  ValidateInlineJobSpec(spec.job, "reid worker", &out);
  return out;
}

}  // namespace nereid::api
