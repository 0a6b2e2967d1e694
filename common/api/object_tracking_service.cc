#include "common/api/object_tracking_service.h"

#include "common/api/sedna_contract.h"
#include "common/api/validation.h"

namespace nereid::api {

using kube::Json;

Json ObjectTrackingServiceSpec::ToJson() const {
  Json reid = Json::object();
  reid_workers.PutInto(&reid);
  Json tracking = Json::array();
  for (const TemplateWorker& w : tracking_workers) tracking.push_back(w.ToJson());
  return Json{{"trackingWorkers", std::move(tracking)}, {"reidWorkers", std::move(reid)}};
}

absl::StatusOr<ObjectTrackingService> ObjectTrackingService::FromJson(const Json& object) {
  if (!object.is_object()) {
    return absl::InvalidArgumentError("an ObjectTrackingService must be a JSON object");
  }
  FieldReader r;
  ObjectTrackingService s;
  CheckTypeMeta(object, kinds::kObjectTrackingService, &r);
  s.metadata = ObjectMeta::FromJson(object);
  if (const Json* spec = r.Object(object, "spec", "")) {
    s.spec.tracking_workers = ReadTemplateWorkers(*spec, "trackingWorkers", "spec", &r);
    if (const Json* reid = r.Object(*spec, "reidWorkers", "spec")) {
      s.spec.reid_workers = ReadInlineDeployment(*reid, "spec.reidWorkers", &r);
    }
  }
  s.status = ReadServiceStatus(object, &r);
  if (!r.ok()) {
    return InvalidObjectError(kinds::kObjectTrackingService, s.metadata.name, r.TakeCauses());
  }
  return s;
}

Json ObjectTrackingService::ToJson() const {
  Json json = ObjectEnvelope(kinds::kObjectTrackingService, metadata);
  json["spec"] = spec.ToJson();
  json["status"] = status.ToJson();
  return json;
}

std::vector<kube::StatusCause> ObjectTrackingService::Validate() const {
  Causes out;
  ValidateTemplateWorkers(spec.tracking_workers, "spec.trackingWorkers", "tracking worker", &out);
  ValidateInlineDeployment(spec.reid_workers, "spec.reidWorkers", "reid worker", &out);
  return out;
}

}  // namespace nereid::api
