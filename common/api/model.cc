#include "common/api/model.h"

#include "absl/strings/str_cat.h"
#include "common/api/sedna_contract.h"
#include "common/api/validation.h"

namespace nereid::api {

using kube::Json;

Json ModelSpec::ToJson() const {
  Json json = {{"url", url}, {"format", format}};
  if (!device_soc_versions.empty()) json["device_soc_versions"] = device_soc_versions;
  if (!credential_name.empty()) json["credentialName"] = credential_name;
  if (!sha256.empty()) json["sha256"] = sha256;
  return json;
}

Json ModelStatus::ToJson() const {
  Json json = Json::object();
  PutTime(&json, "updateTime", update_time);
  if (!metrics.empty()) {
    Json list = Json::array();
    for (const Metric& m : metrics) list.push_back(m.ToJson());
    json["metrics"] = std::move(list);
  }
  if (verified.has_value()) json["verified"] = *verified;
  if (!sha256.empty()) json["sha256"] = sha256;
  if (!reason.empty()) json["reason"] = reason;
  if (!message.empty()) json["message"] = message;
  if (observed_generation.has_value()) json["observedGeneration"] = *observed_generation;
  if (!conditions.empty()) json["conditions"] = ConditionsToJson(conditions);
  return json;
}

ModelStatus ReadModelStatus(const Json& status, FieldReader* reader) {
  ModelStatus out;
  out.update_time = reader->Time(status, "updateTime", "status");
  out.metrics = ReadKeyValues(status, "metrics", "status", reader);
  out.verified = reader->Bool(status, "verified", "status");
  out.sha256 = reader->String(status, "sha256", "status").value_or("");
  out.reason = reader->String(status, "reason", "status").value_or("");
  out.message = reader->String(status, "message", "status").value_or("");
  out.observed_generation = reader->Int(status, "observedGeneration", "status", 0);
  out.conditions = ReadOwnConditions(status);
  return out;
}

absl::StatusOr<Model> Model::FromJson(const Json& object) {
  if (!object.is_object()) return absl::InvalidArgumentError("a Model must be a JSON object");
  FieldReader r;
  Model m;
  CheckTypeMeta(object, kinds::kModel, &r);
  m.metadata = ObjectMeta::FromJson(object);
  if (const Json* spec = r.Object(object, "spec", "")) {
    m.spec.url = r.String(*spec, "url", "spec").value_or("");
    m.spec.format = r.String(*spec, "format", "spec").value_or("");
    m.spec.device_soc_versions = r.StringArray(*spec, "device_soc_versions", "spec");
    m.spec.credential_name = r.String(*spec, "credentialName", "spec").value_or("");
    m.spec.sha256 = r.String(*spec, "sha256", "spec").value_or("");
  }
  if (const Json* status = r.Object(object, "status", "")) {
    m.status = ReadModelStatus(*status, &r);
  }
  if (!r.ok()) return InvalidObjectError(kinds::kModel, m.metadata.name, r.TakeCauses());
  return m;
}

Json Model::ToJson() const {
  Json json = ObjectEnvelope(kinds::kModel, metadata);
  json["spec"] = spec.ToJson();
  json["status"] = status.ToJson();
  return json;
}

bool IsSha256Hex(std::string_view text) {
  if (text.size() != 64) return false;
  for (char c : text) {
    bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    if (!hex) return false;
  }
  return true;
}

std::vector<kube::StatusCause> Model::Validate() const {
  Causes out;
  ValidateLocation(spec.url, "spec.url", "the model url", {"s3", "http", "https"}, &out);
  RequireNonEmpty(spec.format, "spec.format", "the model format (e.g. pb, pth, onnx)", &out);
  for (size_t i = 0; i < spec.device_soc_versions.size(); ++i) {
    if (spec.device_soc_versions[i].empty()) {
      AddInvalid(IndexPath("spec.device_soc_versions", i), "device SoC versions must not be empty",
                 &out);
    }
  }
  if (!spec.sha256.empty() && !IsSha256Hex(spec.sha256)) {
    AddInvalid("spec.sha256",
               absl::StrCat("sha256 must be 64 hexadecimal digits (the output of sha256sum), got ",
                            spec.sha256.size(), " characters"),
               &out);
  }
  return out;
}

}  // namespace nereid::api
