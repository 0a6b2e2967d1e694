#include "common/api/federated_learning_job.h"

#include <limits>
#include <set>

#include "absl/strings/str_cat.h"
#include "common/api/sedna_contract.h"
#include "common/api/validation.h"

namespace nereid::api {

using kube::Json;

namespace {

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

int32_t Count(FieldReader* r, const Json& status, std::string_view key) {
  return static_cast<int32_t>(r->Int(status, key, "status", 0, kInt32Max).value_or(0));
}

Json TemplateWorker(Json json, const PodTemplate& pod_template) {
  if (!pod_template.is_null()) json["template"] = pod_template;
  return json;
}

}  // namespace

Json AggregationWorker::ToJson() const {
  return TemplateWorker(Json{{"model", model.ToJson()}}, pod_template);
}

Json TrainingWorker::ToJson() const {
  return TemplateWorker(Json{{"dataset", dataset.ToJson()}}, pod_template);
}

Json Transmitter::ToJson() const {
  Json json = Json::object();
  if (ws) json["ws"] = Json::object();
  if (s3.has_value()) {
    Json s3_json = {{"aggDataPath", s3->agg_data_path}};
    if (!s3->credential_name.empty()) s3_json["credentialName"] = s3->credential_name;
    json["s3"] = std::move(s3_json);
  }
  return json;
}

Json FederatedLearningJobSpec::ToJson() const {
  Json workers = Json::array();
  for (const TrainingWorker& w : training_workers) workers.push_back(w.ToJson());
  Json json = {{"aggregationWorker", aggregation_worker.ToJson()},
               {"trainingWorkers", std::move(workers)}};
  if (pretrained_model.has_value()) json["pretrainedModel"] = pretrained_model->ToJson();
  if (transmitter.has_value()) json["transmitter"] = transmitter->ToJson();
  return json;
}

Json FederatedLearningJobStatus::ToJson() const {
  Json json = {{"active", active}, {"succeeded", succeeded}, {"failed", failed}};
  if (!phase.empty()) json["phase"] = phase;
  if (!conditions.empty()) json["conditions"] = ConditionsToJson(conditions);
  PutTime(&json, "startTime", start_time);
  PutTime(&json, "completionTime", completion_time);
  if (current_round.has_value()) json["currentRound"] = *current_round;
  if (observed_generation.has_value()) json["observedGeneration"] = *observed_generation;
  return json;
}

absl::StatusOr<FederatedLearningJob> FederatedLearningJob::FromJson(const Json& object) {
  if (!object.is_object()) {
    return absl::InvalidArgumentError("a FederatedLearningJob must be a JSON object");
  }
  FieldReader r;
  FederatedLearningJob job;
  CheckTypeMeta(object, kinds::kFederatedLearningJob, &r);
  job.metadata = ObjectMeta::FromJson(object);
  if (const Json* spec = r.Object(object, "spec", "")) {
    auto& s = job.spec;
    if (const Json* agg = r.Object(*spec, "aggregationWorker", "spec")) {
      const std::string path = "spec.aggregationWorker";
      if (const Json* model = r.Object(*agg, "model", path)) {
        s.aggregation_worker.model = ReadNamedRef(*model, JoinPath(path, "model"), &r);
      }
      s.aggregation_worker.pod_template = ReadPodTemplate(*agg, "template", path, &r);
    }
    if (const Json* workers = r.Array(*spec, "trainingWorkers", "spec")) {
      for (size_t i = 0; i < workers->size(); ++i) {
        const Json& w = (*workers)[i];
        std::string path = IndexPath("spec.trainingWorkers", i);
        TrainingWorker worker;
        if (!w.is_object()) {
          r.AddTypeError(path, "an object", w);
        } else {
          if (const Json* ds = r.Object(w, "dataset", path)) {
            worker.dataset = ReadNamedRef(*ds, JoinPath(path, "dataset"), &r);
          }
          worker.pod_template = ReadPodTemplate(w, "template", path, &r);
        }
        s.training_workers.push_back(std::move(worker));
      }
    }
    s.pretrained_model = ReadOptionalRef(*spec, "pretrainedModel", "spec", &r);
    if (const Json* t = r.Object(*spec, "transmitter", "spec")) {
      const std::string path = "spec.transmitter";
      Transmitter transmitter;
      transmitter.ws = r.Object(*t, "ws", path) != nullptr;
      if (const Json* s3 = r.Object(*t, "s3", path)) {
        const std::string s3_path = "spec.transmitter.s3";
        transmitter.s3 = S3Transmitter{r.String(*s3, "aggDataPath", s3_path).value_or(""),
                                       r.String(*s3, "credentialName", s3_path).value_or("")};
      }
      s.transmitter = std::move(transmitter);
    }
  }
  if (const Json* status = r.Object(object, "status", "")) {
    auto& st = job.status;
    st.phase = r.String(*status, "phase", "status").value_or("");
    st.conditions = ReadConditions(*status, "status", &r);
    st.start_time = r.Time(*status, "startTime", "status");
    st.completion_time = r.Time(*status, "completionTime", "status");
    st.active = Count(&r, *status, "active");
    st.succeeded = Count(&r, *status, "succeeded");
    st.failed = Count(&r, *status, "failed");
    st.current_round = r.Int(*status, "currentRound", "status", 0);
    st.observed_generation = r.Int(*status, "observedGeneration", "status", 0);
  }
  if (!r.ok()) {
    return InvalidObjectError(kinds::kFederatedLearningJob, job.metadata.name, r.TakeCauses());
  }
  return job;
}

Json FederatedLearningJob::ToJson() const {
  Json json = ObjectEnvelope(kinds::kFederatedLearningJob, metadata);
  json["spec"] = spec.ToJson();
  json["status"] = status.ToJson();
  return json;
}

std::vector<kube::StatusCause> FederatedLearningJob::Validate() const {
  Causes out;
  ValidateObjectName(spec.aggregation_worker.model.name, "spec.aggregationWorker.model.name",
                     "the aggregation worker's model name", &out);
  ValidatePodTemplate(spec.aggregation_worker.pod_template, "spec.aggregationWorker.template",
                      "aggregation worker", &out);
  if (spec.training_workers.empty()) {
    AddRequired("spec.trainingWorkers", "at least one training worker is required", &out);
  }
  for (size_t i = 0; i < spec.training_workers.size(); ++i) {
    const TrainingWorker& w = spec.training_workers[i];
    std::string path = IndexPath("spec.trainingWorkers", i);
    ValidateObjectName(w.dataset.name, JoinPath(path, "dataset.name"),
                       "the training worker's dataset name", &out);
    ValidatePodTemplate(w.pod_template, JoinPath(path, "template"), "training worker", &out);
  }
  if (spec.pretrained_model.has_value()) {
    ValidateObjectName(spec.pretrained_model->name, "spec.pretrainedModel.name",
                       "the pretrained model name", &out);
  }
  if (spec.transmitter.has_value()) {
    const Transmitter& t = *spec.transmitter;
    // ws and s3 together: s3 wins, as in Sedna (its FL example sets both).
    if (t.s3.has_value()) {
      const std::string& path = t.s3->agg_data_path;
      if (path.empty()) {
        AddRequired("spec.transmitter.s3.aggDataPath",
                    "the s3 transmitter needs aggDataPath (an s3:// URL)", &out);
      } else if (path.rfind("s3://", 0) != 0 || path.size() == 5) {
        AddInvalid("spec.transmitter.s3.aggDataPath",
                   absl::StrCat("aggDataPath must be an s3:// URL such as s3://bucket/path, got \"",
                                path, "\""),
                   &out);
      }
    }
  }
  return out;
}

}  // namespace nereid::api
