#include "common/api/dataset.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "common/api/sedna_contract.h"
#include "common/api/validation.h"
#include "common/strings/absl_compat.h"

namespace nereid::api {

using kube::Json;

Json DatasetSpec::ToJson() const {
  Json json = {{"url", url}, {"format", format}, {"nodeName", node_name}};
  if (!credential_name.empty()) json["credentialName"] = credential_name;
  return json;
}

Json DatasetStatus::ToJson() const {
  Json json = Json::object();
  if (number_of_samples.has_value()) json["numberOfSamples"] = *number_of_samples;
  PutTime(&json, "updateTime", update_time);
  if (!reason.empty()) json["reason"] = reason;
  if (!message.empty()) json["message"] = message;
  if (observed_generation.has_value()) json["observedGeneration"] = *observed_generation;
  if (!conditions.empty()) json["conditions"] = ConditionsToJson(conditions);
  return json;
}

DatasetStatus ReadDatasetStatus(const Json& status, FieldReader* reader) {
  DatasetStatus out;
  out.number_of_samples = reader->Int(status, "numberOfSamples", "status", 0);
  out.update_time = reader->Time(status, "updateTime", "status");
  out.reason = reader->String(status, "reason", "status").value_or("");
  out.message = reader->String(status, "message", "status").value_or("");
  out.observed_generation = reader->Int(status, "observedGeneration", "status", 0);
  out.conditions = ReadOwnConditions(status);
  return out;
}

absl::StatusOr<Dataset> Dataset::FromJson(const Json& object) {
  if (!object.is_object()) {
    return absl::InvalidArgumentError("a Dataset must be a JSON object");
  }
  FieldReader r;
  Dataset d;
  CheckTypeMeta(object, kinds::kDataset, &r);
  d.metadata = ObjectMeta::FromJson(object);
  if (const Json* spec = r.Object(object, "spec", "")) {
    d.spec.url = r.String(*spec, "url", "spec").value_or("");
    d.spec.format = r.String(*spec, "format", "spec").value_or("");
    d.spec.node_name = r.String(*spec, "nodeName", "spec").value_or("");
    d.spec.credential_name = r.String(*spec, "credentialName", "spec").value_or("");
  }
  if (const Json* status = r.Object(object, "status", "")) {
    d.status = ReadDatasetStatus(*status, &r);
  }
  if (!r.ok()) return InvalidObjectError(kinds::kDataset, d.metadata.name, r.TakeCauses());
  return d;
}

Json Dataset::ToJson() const {
  Json json = ObjectEnvelope(kinds::kDataset, metadata);
  json["spec"] = spec.ToJson();
  json["status"] = status.ToJson();
  return json;
}

std::vector<kube::StatusCause> Dataset::Validate() const {
  Causes out;
  ValidateLocation(spec.url, "spec.url", "the dataset url", {"s3", "http", "https"}, &out);
  RequireNonEmpty(spec.format, "spec.format",
                  "the dataset format (txt, csv, jsonl, dir, voc, xml or coco)", &out);
  ValidateNodeName(spec.node_name, "spec.nodeName", /*required=*/true, &out);
  return out;
}

const std::vector<std::string_view>& KnownDatasetFormats() {
  static const std::vector<std::string_view> formats = {"txt", "csv", "jsonl", "dir",
                                                        "voc", "xml", "coco"};
  return formats;
}

bool IsKnownDatasetFormat(std::string_view format) {
  std::string lower = absl::AsciiStrToLower(ToAbsl(format));
  const auto& formats = KnownDatasetFormats();
  return std::find(formats.begin(), formats.end(), lower) != formats.end();
}

}  // namespace nereid::api
