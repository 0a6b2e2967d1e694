#include "common/api/object_search_service.h"

#include "common/api/sedna_contract.h"
#include "common/api/validation.h"

namespace nereid::api {

using kube::Json;

Json ObjectSearchServiceSpec::ToJson() const {
  Json reid = Json::object();
  reid_workers.PutInto(&reid);
  Json tracking = Json::array();
  for (const TemplateWorker& w : tracking_workers) tracking.push_back(w.ToJson());
  return Json{{"userWorker", user_worker.ToJson()},
              {"trackingWorkers", std::move(tracking)},
              {"reidWorkers", std::move(reid)}};
}

absl::StatusOr<ObjectSearchService> ObjectSearchService::FromJson(const Json& object) {
  if (!object.is_object()) {
    return absl::InvalidArgumentError("an ObjectSearchService must be a JSON object");
  }
  FieldReader r;
  ObjectSearchService s;
  CheckTypeMeta(object, kinds::kObjectSearchService, &r);
  s.metadata = ObjectMeta::FromJson(object);
  if (const Json* spec = r.Object(object, "spec", "")) {
    if (const Json* user = r.Object(*spec, "userWorker", "spec")) {
      s.spec.user_worker = ReadTemplateWorker(*user, "spec.userWorker", &r);
    }
    s.spec.tracking_workers = ReadTemplateWorkers(*spec, "trackingWorkers", "spec", &r);
    if (const Json* reid = r.Object(*spec, "reidWorkers", "spec")) {
      s.spec.reid_workers = ReadInlineDeployment(*reid, "spec.reidWorkers", &r);
    }
  }
  s.status = ReadServiceStatus(object, &r);
  if (!r.ok()) {
    return InvalidObjectError(kinds::kObjectSearchService, s.metadata.name, r.TakeCauses());
  }
  return s;
}

Json ObjectSearchService::ToJson() const {
  Json json = ObjectEnvelope(kinds::kObjectSearchService, metadata);
  json["spec"] = spec.ToJson();
  json["status"] = status.ToJson();
  return json;
}

std::vector<kube::StatusCause> ObjectSearchService::Validate() const {
  Causes out;
  ValidatePodTemplate(spec.user_worker.pod_template, "spec.userWorker.template", "user worker",
                      &out);
  ValidateTemplateWorkers(spec.tracking_workers, "spec.trackingWorkers", "tracking worker", &out);
  ValidateInlineDeployment(spec.reid_workers, "spec.reidWorkers", "reid worker", &out);
  return out;
}

}  // namespace nereid::api
