#include "common/api/video_analytics_job.h"

#include "common/api/sedna_contract.h"
#include "common/api/validation.h"

namespace nereid::api {

using kube::Json;

Json VideoAnalyticsJobSpec::ToJson() const {
  Json json = Json::object();
  job.ToJson(&json);
  if (kafka_support.has_value()) json["kafkaSupport"] = *kafka_support;
  json["model"] = model.ToJson();
  return json;
}

absl::StatusOr<VideoAnalyticsJob> VideoAnalyticsJob::FromJson(const Json& object) {
  if (!object.is_object()) {
    return absl::InvalidArgumentError("a VideoAnalyticsJob must be a JSON object");
  }
  FieldReader r;
  VideoAnalyticsJob job;
  CheckTypeMeta(object, kinds::kVideoAnalyticsJob, &r);
  job.metadata = ObjectMeta::FromJson(object);
  if (const Json* spec = r.Object(object, "spec", "")) {
    job.spec.job = ReadInlineJobSpec(*spec, &r);
    job.spec.kafka_support = r.Bool(*spec, "kafkaSupport", "spec");
    if (const Json* model = r.Object(*spec, "model", "spec")) {
      job.spec.model = ReadNamedRef(*model, "spec.model", &r);
    }
  }
  if (const Json* status = r.Object(object, "status", "")) {
    job.status = ReadInferenceJobStatus(*status, &r);
  }
  if (!r.ok()) {
    return InvalidObjectError(kinds::kVideoAnalyticsJob, job.metadata.name, r.TakeCauses());
  }
  return job;
}

Json VideoAnalyticsJob::ToJson() const {
  Json json = ObjectEnvelope(kinds::kVideoAnalyticsJob, metadata);
  json["spec"] = spec.ToJson();
  json["status"] = status.ToJson();
  return json;
}

std::vector<kube::StatusCause> VideoAnalyticsJob::Validate() const {
  Causes out;
  ValidateObjectName(spec.model.name, "spec.model.name", "the detection model's name", &out);
  ValidateInlineJobSpec(spec.job, "video analytics worker", &out);
  return out;
}

}  // namespace nereid::api
