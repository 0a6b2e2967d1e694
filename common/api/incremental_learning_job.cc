#include "common/api/incremental_learning_job.h"

#include "absl/strings/str_cat.h"
#include "common/api/sedna_contract.h"
#include "common/api/validation.h"

namespace nereid::api {

using kube::Json;

namespace {
void PutTemplate(Json* json, const PodTemplate& pod_template) {
  if (!pod_template.is_null()) (*json)["template"] = pod_template;
}
}  // namespace

Json DeployModel::ToJson() const {
  Json json = {{"name", name}};
  if (hot_update_enabled) json["hotUpdateEnabled"] = true;
  if (poll_period_seconds.has_value()) json["pollPeriodSeconds"] = *poll_period_seconds;
  return json;
}

Json IlTrainSpec::ToJson() const {
  Json json = {{"trigger", trigger.ToJson()}};
  PutTemplate(&json, pod_template);
  return json;
}

Json IlEvalSpec::ToJson() const {
  Json json = Json::object();
  PutTemplate(&json, pod_template);
  if (initial_model.has_value()) json["initialModel"] = initial_model->ToJson();
  return json;
}

Json IlDeploySpec::ToJson() const {
  Json json = {{"model", model.ToJson()}, {"trigger", trigger.ToJson()}};
  if (hard_example_mining.has_value()) json["hardExampleMining"] = hard_example_mining->ToJson();
  PutTemplate(&json, pod_template);
  return json;
}

Json IncrementalLearningJobSpec::ToJson() const {
  Json json = {{"dataset", dataset.ToJson()},        {"initialModel", initial_model.ToJson()},
               {"trainSpec", train_spec.ToJson()},   {"evalSpec", eval_spec.ToJson()},
               {"deploySpec", deploy_spec.ToJson()}, {"outputDir", output_dir}};
  if (!credential_name.empty()) json["credentialName"] = credential_name;
  return json;
}

absl::StatusOr<IncrementalLearningJob> IncrementalLearningJob::FromJson(const Json& object) {
  if (!object.is_object()) {
    return absl::InvalidArgumentError("an IncrementalLearningJob must be a JSON object");
  }
  FieldReader r;
  IncrementalLearningJob job;
  CheckTypeMeta(object, kinds::kIncrementalLearningJob, &r);
  job.metadata = ObjectMeta::FromJson(object);
  if (const Json* spec = r.Object(object, "spec", "")) {
    auto& s = job.spec;
    if (const Json* ds = r.Object(*spec, "dataset", "spec")) {
      s.dataset = ReadJobDataset(*ds, "spec.dataset", &r);
    }
    if (const Json* m = r.Object(*spec, "initialModel", "spec")) {
      s.initial_model = ReadNamedRef(*m, "spec.initialModel", &r);
    }
    if (const Json* train = r.Object(*spec, "trainSpec", "spec")) {
      s.train_spec.pod_template = ReadPodTemplate(*train, "template", "spec.trainSpec", &r);
      if (const Json* t = r.Object(*train, "trigger", "spec.trainSpec")) {
        s.train_spec.trigger = ReadTrigger(*t, "spec.trainSpec.trigger", &r);
      }
    }
    if (const Json* eval = r.Object(*spec, "evalSpec", "spec")) {
      s.eval_spec.pod_template = ReadPodTemplate(*eval, "template", "spec.evalSpec", &r);
      s.eval_spec.initial_model = ReadOptionalRef(*eval, "initialModel", "spec.evalSpec", &r);
    }
    if (const Json* deploy = r.Object(*spec, "deploySpec", "spec")) {
      const std::string path = "spec.deploySpec";
      auto& d = s.deploy_spec;
      if (const Json* m = r.Object(*deploy, "model", path)) {
        const std::string model_path = "spec.deploySpec.model";
        d.model.name = r.String(*m, "name", model_path).value_or("");
        d.model.hot_update_enabled = r.Bool(*m, "hotUpdateEnabled", model_path).value_or(false);
        d.model.poll_period_seconds = r.Int(*m, "pollPeriodSeconds", model_path);
      }
      if (const Json* t = r.Object(*deploy, "trigger", path)) {
        d.trigger = ReadTrigger(*t, "spec.deploySpec.trigger", &r);
      }
      if (const Json* hem = r.Object(*deploy, "hardExampleMining", path)) {
        d.hard_example_mining =
            ReadHardExampleMining(*hem, "spec.deploySpec.hardExampleMining", &r);
      }
      d.pod_template = ReadPodTemplate(*deploy, "template", path, &r);
    }
    s.credential_name = r.String(*spec, "credentialName", "spec").value_or("");
    s.output_dir = r.String(*spec, "outputDir", "spec").value_or("");
  }
  if (const Json* status = r.Object(object, "status", "")) {
    job.status.ReadFrom(*status, &r);
  }
  if (!r.ok()) {
    return InvalidObjectError(kinds::kIncrementalLearningJob, job.metadata.name, r.TakeCauses());
  }
  return job;
}

Json IncrementalLearningJob::StatusToJson() const {
  Json json = Json::object();
  status.ToJson(&json);
  return json;
}

Json IncrementalLearningJob::ToJson() const {
  Json json = ObjectEnvelope(kinds::kIncrementalLearningJob, metadata);
  json["spec"] = spec.ToJson();
  json["status"] = StatusToJson();
  return json;
}

std::vector<kube::StatusCause> IncrementalLearningJob::Validate() const {
  Causes out;
  ValidateJobDataset(spec.dataset, "spec.dataset", &out);
  ValidateObjectName(spec.initial_model.name, "spec.initialModel.name", "the initial model name",
                     &out);
  ValidatePodTemplate(spec.train_spec.pod_template, "spec.trainSpec.template", "train worker",
                      &out);
  ValidateTrigger(spec.train_spec.trigger, "spec.trainSpec.trigger", &out);
  ValidatePodTemplate(spec.eval_spec.pod_template, "spec.evalSpec.template", "eval worker", &out);
  if (spec.eval_spec.initial_model.has_value()) {
    ValidateObjectName(spec.eval_spec.initial_model->name, "spec.evalSpec.initialModel.name",
                       "the eval initial model name", &out);
  }
  const IlDeploySpec& deploy = spec.deploy_spec;
  ValidateObjectName(deploy.model.name, "spec.deploySpec.model.name", "the deploy model name",
                     &out);
  if (deploy.model.poll_period_seconds.has_value() && *deploy.model.poll_period_seconds < 1) {
    AddInvalid("spec.deploySpec.model.pollPeriodSeconds",
               absl::StrCat("pollPeriodSeconds must be at least 1, got ",
                            *deploy.model.poll_period_seconds),
               &out);
  }
  ValidateTrigger(deploy.trigger, "spec.deploySpec.trigger", &out);
  if (deploy.hard_example_mining.has_value()) {
    ValidateHardExampleMining(*deploy.hard_example_mining, "spec.deploySpec.hardExampleMining",
                              &out);
  }
  ValidatePodTemplate(deploy.pod_template, "spec.deploySpec.template", "inference worker", &out);
  ValidateLocation(spec.output_dir, "spec.outputDir", "the output directory", {"s3"}, &out);
  return out;
}

}  // namespace nereid::api
