#include "common/api/lifelong_learning_job.h"

#include "absl/strings/str_cat.h"
#include "common/api/sedna_contract.h"
#include "common/api/validation.h"

namespace nereid::api {

using kube::Json;

namespace {

KnowledgeBase ReadKnowledgeBase(const Json& kb, FieldReader* r) {
  const std::string path = "status.knowledgeBase";
  KnowledgeBase out;
  if (const Json* models = r->Object(kb, "AIModels", path)) {
    const std::string models_path = JoinPath(path, "AIModels");
    out.number_of_ai_models = r->Int(*models, "numberOfAIModels", models_path, 0).value_or(0);
    if (const Json* list = r->Array(*models, "listOfAIModels", models_path)) {
      const std::string list_path = JoinPath(models_path, "listOfAIModels");
      for (size_t i = 0; i < list->size(); ++i) {
        const Json& item = (*list)[i];
        std::string item_path = IndexPath(list_path, i);
        if (!item.is_object()) {
          r->AddTypeError(item_path, "an object", item);
          continue;
        }
        KbModel m;
        m.model_id = r->String(item, "modelID", item_path).value_or("");
        m.average_precision = r->Number(item, "averagePrecision", item_path).value_or(0);
        m.number_of_train_samples = r->Int(item, "numberOfTrainSamples", item_path, 0).value_or(0);
        out.list_of_ai_models.push_back(std::move(m));
      }
    }
  }
  if (const Json* classes = r->Object(kb, "AIClasses", path)) {
    const std::string classes_path = JoinPath(path, "AIClasses");
    out.number_of_ai_classes = r->Int(*classes, "numberOfAIClasses", classes_path, 0).value_or(0);
    out.list_of_ai_classes = r->StringArray(*classes, "listOfAIClasses", classes_path);
  }
  if (const Json* samples = r->Object(kb, "samples", path)) {
    const std::string samples_path = JoinPath(path, "samples");
    out.number_of_labeled_unseen_sample =
        r->Int(*samples, "numberOfLabeledUnseenSample", samples_path, 0).value_or(0);
    out.number_of_unseen_sample =
        r->Int(*samples, "numberOfUnseenSample", samples_path, 0).value_or(0);
  }
  return out;
}

}  // namespace

Json LlTemplateSpec::ToJson() const {
  Json json = Json::object();
  if (!pod_template.is_null()) json["template"] = pod_template;
  return json;
}

Json LifelongLearningJobSpec::ToJson() const {
  Json json = {{"dataset", dataset.ToJson()},
               {"trainSpec", train_spec.ToJson()},
               {"evalSpec", eval_spec.ToJson()},
               {"deploySpec", deploy_spec.ToJson()},
               {"outputDir", output_dir}};
  if (!credential_name.empty()) json["credentialName"] = credential_name;
  return json;
}

Json KnowledgeBase::ToJson() const {
  Json models = {{"numberOfAIModels", number_of_ai_models}};
  if (!list_of_ai_models.empty()) {
    Json list = Json::array();
    for (const KbModel& m : list_of_ai_models) {
      list.push_back({{"modelID", m.model_id},
                      {"averagePrecision", m.average_precision},
                      {"numberOfTrainSamples", m.number_of_train_samples}});
    }
    models["listOfAIModels"] = std::move(list);
  }
  Json classes = {{"numberOfAIClasses", number_of_ai_classes}};
  if (!list_of_ai_classes.empty()) classes["listOfAIClasses"] = list_of_ai_classes;
  return Json{{"AIModels", std::move(models)},
              {"AIClasses", std::move(classes)},
              {"samples",
               {{"numberOfLabeledUnseenSample", number_of_labeled_unseen_sample},
                {"numberOfUnseenSample", number_of_unseen_sample}}}};
}

absl::StatusOr<LifelongLearningJob> LifelongLearningJob::FromJson(const Json& object) {
  if (!object.is_object()) {
    return absl::InvalidArgumentError("a LifelongLearningJob must be a JSON object");
  }
  FieldReader r;
  LifelongLearningJob job;
  CheckTypeMeta(object, kinds::kLifelongLearningJob, &r);
  job.metadata = ObjectMeta::FromJson(object);
  if (const Json* spec = r.Object(object, "spec", "")) {
    auto& s = job.spec;
    if (const Json* ds = r.Object(*spec, "dataset", "spec")) {
      s.dataset = ReadJobDataset(*ds, "spec.dataset", &r);
    }
    if (const Json* train = r.Object(*spec, "trainSpec", "spec")) {
      s.train_spec.pod_template = ReadPodTemplate(*train, "template", "spec.trainSpec", &r);
      if (const Json* t = r.Object(*train, "trigger", "spec.trainSpec")) {
        s.train_spec.trigger = ReadTrigger(*t, "spec.trainSpec.trigger", &r);
      }
    }
    if (const Json* eval = r.Object(*spec, "evalSpec", "spec")) {
      s.eval_spec.pod_template = ReadPodTemplate(*eval, "template", "spec.evalSpec", &r);
    }
    if (const Json* deploy = r.Object(*spec, "deploySpec", "spec")) {
      s.deploy_spec.pod_template = ReadPodTemplate(*deploy, "template", "spec.deploySpec", &r);
    }
    s.credential_name = r.String(*spec, "credentialName", "spec").value_or("");
    s.output_dir = r.String(*spec, "outputDir", "spec").value_or("");
  }
  if (const Json* status = r.Object(object, "status", "")) {
    job.status.ReadFrom(*status, &r);
    if (const Json* kb = r.Object(*status, "knowledgeBase", "status")) {
      job.status.knowledge_base = ReadKnowledgeBase(*kb, &r);
    }
  }
  if (!r.ok()) {
    return InvalidObjectError(kinds::kLifelongLearningJob, job.metadata.name, r.TakeCauses());
  }
  return job;
}

Json LifelongLearningJob::StatusToJson() const {
  Json json = Json::object();
  status.ToJson(&json);
  if (status.knowledge_base.has_value()) json["knowledgeBase"] = status.knowledge_base->ToJson();
  return json;
}

Json LifelongLearningJob::ToJson() const {
  Json json = ObjectEnvelope(kinds::kLifelongLearningJob, metadata);
  json["spec"] = spec.ToJson();
  json["status"] = StatusToJson();
  return json;
}

std::vector<kube::StatusCause> LifelongLearningJob::Validate() const {
  Causes out;
  ValidateJobDataset(spec.dataset, "spec.dataset", &out);
  ValidatePodTemplate(spec.train_spec.pod_template, "spec.trainSpec.template", "train worker",
                      &out);
  ValidateTrigger(spec.train_spec.trigger, "spec.trainSpec.trigger", &out);
  ValidatePodTemplate(spec.eval_spec.pod_template, "spec.evalSpec.template", "eval worker", &out);
  ValidatePodTemplate(spec.deploy_spec.pod_template, "spec.deploySpec.template", "inference worker",
                      &out);
  ValidateLocation(spec.output_dir, "spec.outputDir", "the output directory", {"s3"}, &out);
  return out;
}

}  // namespace nereid::api
