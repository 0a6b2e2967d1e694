#include "common/api/joint_inference_service.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "common/api/sedna_contract.h"
#include "common/api/validation.h"

namespace nereid::api {

using kube::Json;

namespace {

constexpr int64_t kInt32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

std::optional<int32_t> ToInt32(std::optional<int64_t> v) {
  if (!v.has_value()) return std::nullopt;
  return static_cast<int32_t>(*v);
}

std::optional<Hpa> ReadHpa(const Json& worker, std::string_view parent, FieldReader* r) {
  const Json* hpa = r->Object(worker, "hpa", parent);
  if (hpa == nullptr) return std::nullopt;
  std::string path = JoinPath(parent, "hpa");
  Hpa out;
  out.min_replicas = ToInt32(r->Int(*hpa, "minReplicas", path, kInt32Min, kInt32Max));
  out.max_replicas = ToInt32(r->Int(*hpa, "maxReplicas", path, kInt32Min, kInt32Max)).value_or(0);
  if (const Json* metrics = r->Array(*hpa, "metrics", path)) out.metrics = *metrics;
  if (const Json* behavior = r->Object(*hpa, "behavior", path)) out.behavior = *behavior;
  return out;
}

void PutWorkerCommon(Json* json, const PodTemplate& pod_template, const std::optional<Hpa>& hpa,
                     const std::optional<int32_t>& replicas) {
  if (!pod_template.is_null()) (*json)["template"] = pod_template;
  if (hpa.has_value()) (*json)["hpa"] = hpa->ToJson();
  if (replicas.has_value()) (*json)["replicas"] = *replicas;
}

void ValidateHpa(const Hpa& hpa, const std::string& field, Causes* out) {
  if (hpa.max_replicas < 1) {
    AddRequired(JoinPath(field, "maxReplicas"),
                "hpa.maxReplicas is required and must be at least 1", out);
  }
  if (hpa.min_replicas.has_value()) {
    if (*hpa.min_replicas < 1) {
      AddInvalid(JoinPath(field, "minReplicas"),
                 absl::StrCat("hpa.minReplicas must be at least 1, got ", *hpa.min_replicas), out);
    } else if (hpa.max_replicas >= 1 && *hpa.min_replicas > hpa.max_replicas) {
      AddInvalid(JoinPath(field, "minReplicas"),
                 absl::StrCat("hpa.minReplicas (", *hpa.min_replicas,
                              ") must not exceed hpa.maxReplicas (", hpa.max_replicas, ")"),
                 out);
    }
  }
  if (!hpa.metrics.is_null()) {
    for (size_t i = 0; i < hpa.metrics.size(); ++i) {
      const Json& m = hpa.metrics[i];
      std::string m_field = IndexPath(JoinPath(field, "metrics"), i);
      if (!m.is_object() || !m.contains("type") || !m["type"].is_string()) {
        AddRequired(JoinPath(m_field, "type"),
                    "every hpa metric needs a type (Resource, Pods, Object, External or "
                    "ContainerResource)",
                    out);
      }
    }
  }
}

void ValidateReplicas(const std::optional<int32_t>& replicas, const std::string& field,
                      Causes* out) {
  if (replicas.has_value() && *replicas < 0) {
    AddInvalid(field, absl::StrCat("replicas must not be negative, got ", *replicas), out);
  }
}

}  // namespace

Json Hpa::ToJson() const {
  Json json = {{"maxReplicas", max_replicas}};
  if (min_replicas.has_value()) json["minReplicas"] = *min_replicas;
  if (!metrics.is_null()) json["metrics"] = metrics;
  if (!behavior.is_null()) json["behavior"] = behavior;
  return json;
}

Json JointInferenceEdgeWorker::ToJson() const {
  Json json = {{"model", model.ToJson()}, {"hardExampleMining", hard_example_mining.ToJson()}};
  PutWorkerCommon(&json, pod_template, hpa, replicas);
  return json;
}

Json JointInferenceCloudWorker::ToJson() const {
  Json json = {{"model", model.ToJson()}};
  PutWorkerCommon(&json, pod_template, hpa, replicas);
  return json;
}

Json JointInferenceServiceSpec::ToJson() const {
  return Json{{"edgeWorker", edge_worker.ToJson()}, {"cloudWorker", cloud_worker.ToJson()}};
}

Json JointInferenceServiceStatus::ToJson() const {
  Json json = {{"active", active}, {"failed", failed}};
  if (!phase.empty()) json["phase"] = phase;
  if (!conditions.empty()) json["conditions"] = ConditionsToJson(conditions);
  PutTime(&json, "startTime", start_time);
  if (!metrics.empty()) {
    Json list = Json::array();
    for (const Metric& m : metrics) list.push_back(m.ToJson());
    json["metrics"] = std::move(list);
  }
  if (observed_generation.has_value()) json["observedGeneration"] = *observed_generation;
  return json;
}

JointInferenceServiceStatus ReadServiceStatus(const Json& object, FieldReader* reader) {
  JointInferenceServiceStatus st;
  const Json* status = reader->Object(object, "status", "");
  if (status == nullptr) return st;
  st.phase = reader->String(*status, "phase", "status").value_or("");
  st.conditions = ReadConditions(*status, "status", reader);
  st.start_time = reader->Time(*status, "startTime", "status");
  st.active = ToInt32(reader->Int(*status, "active", "status", 0, kInt32Max)).value_or(0);
  st.failed = ToInt32(reader->Int(*status, "failed", "status", 0, kInt32Max)).value_or(0);
  st.metrics = ReadKeyValues(*status, "metrics", "status", reader);
  st.observed_generation = reader->Int(*status, "observedGeneration", "status", 0);
  return st;
}

absl::StatusOr<JointInferenceService> JointInferenceService::FromJson(const Json& object) {
  if (!object.is_object()) {
    return absl::InvalidArgumentError("a JointInferenceService must be a JSON object");
  }
  FieldReader r;
  JointInferenceService s;
  CheckTypeMeta(object, kinds::kJointInferenceService, &r);
  s.metadata = ObjectMeta::FromJson(object);
  if (const Json* spec = r.Object(object, "spec", "")) {
    if (const Json* edge = r.Object(*spec, "edgeWorker", "spec")) {
      const std::string path = "spec.edgeWorker";
      auto& w = s.spec.edge_worker;
      if (const Json* model = r.Object(*edge, "model", path)) {
        w.model = ReadNamedRef(*model, JoinPath(path, "model"), &r);
      }
      if (const Json* hem = r.Object(*edge, "hardExampleMining", path)) {
        w.hard_example_mining =
            ReadHardExampleMining(*hem, JoinPath(path, "hardExampleMining"), &r);
      }
      w.pod_template = ReadPodTemplate(*edge, "template", path, &r);
      w.hpa = ReadHpa(*edge, path, &r);
      w.replicas = ToInt32(r.Int(*edge, "replicas", path, kInt32Min, kInt32Max));
    }
    if (const Json* cloud = r.Object(*spec, "cloudWorker", "spec")) {
      const std::string path = "spec.cloudWorker";
      auto& w = s.spec.cloud_worker;
      if (const Json* model = r.Object(*cloud, "model", path)) {
        w.model = ReadNamedRef(*model, JoinPath(path, "model"), &r);
      }
      w.pod_template = ReadPodTemplate(*cloud, "template", path, &r);
      w.hpa = ReadHpa(*cloud, path, &r);
      w.replicas = ToInt32(r.Int(*cloud, "replicas", path, kInt32Min, kInt32Max));
    }
  }
  s.status = ReadServiceStatus(object, &r);
  if (!r.ok()) {
    return InvalidObjectError(kinds::kJointInferenceService, s.metadata.name, r.TakeCauses());
  }
  return s;
}

Json JointInferenceService::ToJson() const {
  Json json = ObjectEnvelope(kinds::kJointInferenceService, metadata);
  json["spec"] = spec.ToJson();
  json["status"] = status.ToJson();
  return json;
}

std::vector<kube::StatusCause> JointInferenceService::Validate() const {
  Causes out;
  const auto& edge = spec.edge_worker;
  ValidateObjectName(edge.model.name, "spec.edgeWorker.model.name", "the edge worker's model name",
                     &out);
  ValidateHardExampleMining(edge.hard_example_mining, "spec.edgeWorker.hardExampleMining", &out);
  ValidatePodTemplate(edge.pod_template, "spec.edgeWorker.template", "edge worker", &out);
  if (edge.hpa.has_value()) ValidateHpa(*edge.hpa, "spec.edgeWorker.hpa", &out);
  ValidateReplicas(edge.replicas, "spec.edgeWorker.replicas", &out);

  const auto& cloud = spec.cloud_worker;
  ValidateObjectName(cloud.model.name, "spec.cloudWorker.model.name",
                     "the cloud worker's model name", &out);
  ValidatePodTemplate(cloud.pod_template, "spec.cloudWorker.template", "cloud worker", &out);
  if (cloud.hpa.has_value()) ValidateHpa(*cloud.hpa, "spec.cloudWorker.hpa", &out);
  ValidateReplicas(cloud.replicas, "spec.cloudWorker.replicas", &out);
  return out;
}

}  // namespace nereid::api
