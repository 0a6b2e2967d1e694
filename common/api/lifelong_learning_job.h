#pragma once

// LifelongLearningJob (sedna.io/v1alpha1, short name ll): like incremental learning, but training
// feeds a knowledge base of task-specific models (the KB server) instead of replacing one model,
// and unseen tasks are detected at inference time. Same Train -> Eval -> Deploy stage machine.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/common_types.h"
#include "common/api/incremental_learning_job.h"
#include "common/kube/errors.h"
#include "common/kube/object.h"

namespace nereid::api {

struct LlTemplateSpec {  // evalSpec / deploySpec: {template}.
  PodTemplate pod_template;

  kube::Json ToJson() const;
  friend bool operator==(const LlTemplateSpec&, const LlTemplateSpec&) = default;
};

struct LifelongLearningJobSpec {
  JobDataset dataset;
  IlTrainSpec train_spec;      // JSON "trainSpec": {template, trigger}.
  LlTemplateSpec eval_spec;    // JSON "evalSpec".
  LlTemplateSpec deploy_spec;  // JSON "deploySpec".
  std::string credential_name;
  std::string output_dir;

  kube::Json ToJson() const;
  friend bool operator==(const LifelongLearningJobSpec&, const LifelongLearningJobSpec&) = default;
};

// Sedna's knowledge-base summary (JSON names as Sedna's: "AIModels", "AIClasses", "samples").
struct KbModel {
  std::string model_id;                 // JSON "modelID".
  double average_precision = 0;         // JSON "averagePrecision".
  int64_t number_of_train_samples = 0;  // JSON "numberOfTrainSamples".
  friend bool operator==(const KbModel&, const KbModel&) = default;
};
struct KnowledgeBase {
  int64_t number_of_ai_models = 0;              // AIModels.numberOfAIModels
  std::vector<KbModel> list_of_ai_models;       // AIModels.listOfAIModels
  int64_t number_of_ai_classes = 0;             // AIClasses.numberOfAIClasses
  std::vector<std::string> list_of_ai_classes;  // AIClasses.listOfAIClasses
  int64_t number_of_labeled_unseen_sample = 0;  // samples.numberOfLabeledUnseenSample
  int64_t number_of_unseen_sample = 0;          // samples.numberOfUnseenSample

  kube::Json ToJson() const;
  friend bool operator==(const KnowledgeBase&, const KnowledgeBase&) = default;
};

// The stage-machine status (see StagedJobStatus) plus Sedna's knowledgeBase.
struct LifelongLearningJobStatus : StagedJobStatus {
  std::optional<KnowledgeBase> knowledge_base;  // JSON "knowledgeBase".
  friend bool operator==(const LifelongLearningJobStatus&,
                         const LifelongLearningJobStatus&) = default;
};

struct LifelongLearningJob {
  ObjectMeta metadata;
  LifelongLearningJobSpec spec;
  LifelongLearningJobStatus status;

  // See Dataset::FromJson for the error contract.
  static absl::StatusOr<LifelongLearningJob> FromJson(const kube::Json& object);
  kube::Json ToJson() const;
  kube::Json StatusToJson() const;
  std::vector<kube::StatusCause> Validate() const;
};

}  // namespace nereid::api
