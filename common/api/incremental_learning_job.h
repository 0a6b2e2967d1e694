#pragma once

// IncrementalLearningJob (sedna.io/v1alpha1, short name il): retrains a deployed model from new
// samples of a Dataset in rounds of Train -> Eval -> Deploy. The LC of the dataset's node evaluates
// the train trigger (usually on num_of_samples) and the deploy trigger (on eval metric deltas); the
// GM creates one pod per stage from that stage's template.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/common_types.h"
#include "common/kube/errors.h"
#include "common/kube/object.h"

namespace nereid::api {

inline constexpr int64_t kDefaultPollPeriodSeconds = 60;

// The model the inference worker serves; replaced when a round's deploy trigger fires.
struct DeployModel {
  std::string name;
  // JSON "hotUpdateEnabled": the inference pod reloads the model from a config file instead of
  // being recreated.
  bool hot_update_enabled = false;
  // JSON "pollPeriodSeconds": how often the inference worker polls that file; >= 1, default 60.
  std::optional<int64_t> poll_period_seconds;

  int64_t PollPeriodSeconds() const {
    return poll_period_seconds.value_or(kDefaultPollPeriodSeconds);
  }
  kube::Json ToJson() const;
  friend bool operator==(const DeployModel&, const DeployModel&) = default;
};

struct IlTrainSpec {
  PodTemplate pod_template;  // JSON "template".
  Trigger trigger;           // Typically {condition: {metric: num_of_samples, operator: ">", ...}}.

  kube::Json ToJson() const;
  friend bool operator==(const IlTrainSpec&, const IlTrainSpec&) = default;
};

struct IlEvalSpec {
  PodTemplate pod_template;
  std::optional<NamedRef> initial_model;  // JSON "initialModel": baseline for the first eval.

  kube::Json ToJson() const;
  friend bool operator==(const IlEvalSpec&, const IlEvalSpec&) = default;
};

struct IlDeploySpec {
  DeployModel model;
  Trigger trigger;                                       // Typically on precision_delta.
  std::optional<HardExampleMining> hard_example_mining;  // JSON "hardExampleMining".
  PodTemplate pod_template;

  kube::Json ToJson() const;
  friend bool operator==(const IlDeploySpec&, const IlDeploySpec&) = default;
};

struct IncrementalLearningJobSpec {
  JobDataset dataset;
  NamedRef initial_model;       // JSON "initialModel".
  IlTrainSpec train_spec;       // JSON "trainSpec".
  IlEvalSpec eval_spec;         // JSON "evalSpec".
  IlDeploySpec deploy_spec;     // JSON "deploySpec".
  std::string credential_name;  // JSON "credentialName": S3 credentials for outputDir.
  std::string output_dir;       // JSON "outputDir": host path or s3:// URL.

  kube::Json ToJson() const;
  friend bool operator==(const IncrementalLearningJobSpec&,
                         const IncrementalLearningJobSpec&) = default;
};

using IncrementalLearningJobStatus = StagedJobStatus;

struct IncrementalLearningJob {
  ObjectMeta metadata;
  IncrementalLearningJobSpec spec;
  IncrementalLearningJobStatus status;

  // See Dataset::FromJson for the error contract.
  static absl::StatusOr<IncrementalLearningJob> FromJson(const kube::Json& object);
  kube::Json ToJson() const;
  kube::Json StatusToJson() const;
  std::vector<kube::StatusCause> Validate() const;
};

}  // namespace nereid::api
