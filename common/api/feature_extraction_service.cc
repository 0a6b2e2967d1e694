#include "common/api/feature_extraction_service.h"

#include "common/api/sedna_contract.h"
#include "common/api/validation.h"

namespace nereid::api {

using kube::Json;

Json FeatureExtractionServiceSpec::ToJson() const {
  Json json = {{"model", model.ToJson()}};
  if (kafka_support.has_value()) json["kafkaSupport"] = *kafka_support;
  deployment.PutInto(&json);
  return json;
}

absl::StatusOr<FeatureExtractionService> FeatureExtractionService::FromJson(const Json& object) {
  if (!object.is_object()) {
    return absl::InvalidArgumentError("a FeatureExtractionService must be a JSON object");
  }
  FieldReader r;
  FeatureExtractionService s;
  CheckTypeMeta(object, kinds::kFeatureExtractionService, &r);
  s.metadata = ObjectMeta::FromJson(object);
  if (const Json* spec = r.Object(object, "spec", "")) {
    s.spec.kafka_support = r.Bool(*spec, "kafkaSupport", "spec");
    if (const Json* model = r.Object(*spec, "model", "spec")) {
      s.spec.model = ReadNamedRef(*model, "spec.model", &r);
    }
    s.spec.deployment = ReadInlineDeployment(*spec, "spec", &r);
  }
  s.status = ReadServiceStatus(object, &r);
  if (!r.ok()) {
    return InvalidObjectError(kinds::kFeatureExtractionService, s.metadata.name, r.TakeCauses());
  }
  return s;
}

Json FeatureExtractionService::ToJson() const {
  Json json = ObjectEnvelope(kinds::kFeatureExtractionService, metadata);
  json["spec"] = spec.ToJson();
  json["status"] = status.ToJson();
  return json;
}

std::vector<kube::StatusCause> FeatureExtractionService::Validate() const {
  Causes out;
  ValidateObjectName(spec.model.name, "spec.model.name", "the feature extraction model's name",
                     &out);
  ValidateInlineDeployment(spec.deployment, "spec", "feature extraction worker", &out);
  return out;
}

}  // namespace nereid::api
