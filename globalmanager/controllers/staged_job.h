#pragma once

// What IncrementalLearningJob and LifelongLearningJob share for their controller
// (staged_job_controller.h): a kind-neutral view of the parsed object (StagedJob), the references
// it resolves (StagedRefs) and the small interface each kind implements (StagedKind) for what
// differs — its spec, the env and storage of each worker, the spec its edge nodes receive and
// LifelongLearningJob's knowledge base.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/common_types.h"
#include "common/api/json_fields.h"
#include "common/job/job_spec.h"
#include "common/kube/errors.h"
#include "common/kube/object.h"
#include "common/kube/resource.h"
#include "globalmanager/controllers/spec_validity.h"
#include "globalmanager/controllers/worker_template.h"
#include "nereid/edge/v1/resources.pb.h"

namespace nereid::gm {

// Nereid's additions to the IL/LL status (the CRDs declare them), next to Sedna's conditions and
// the StagedJobStatus summary fields.
namespace staged_status {
inline constexpr char kReason[] = "reason";                // why the job cannot run
inline constexpr char kMessage[] = "message";
inline constexpr char kJobConditions[] = "jobConditions";  // one per type: SpecValid
inline constexpr char kStageNodes[] = "stageNodes";        // {train, eval, deploy}
inline constexpr char kStagePods[] = "stagePods";          // the current stage run (JobStatus)
inline constexpr char kModelUpdates[] = "modelUpdates";    // models installed by Deploy stages
inline constexpr char kLastTrainedModel[] = "lastTrainedModel";  // url of the latest train output
}  // namespace staged_status

// Labels on the stage pods (next to the common job library's and Sedna's).
inline constexpr std::string_view kStageRunLabel = "nereid.io/stage-run";

// The stage a Deploy stage is served by (Sedna's worker type "inference").
inline constexpr std::string_view kInferenceWorker = "inference";

// A parsed IL/LL job, kind-neutral.
struct StagedJob {
  api::ObjectMeta meta;
  api::JobDataset dataset;
  api::PodTemplate train_template;
  api::PodTemplate eval_template;
  api::PodTemplate deploy_template;
  api::Trigger train_trigger;
  std::optional<api::Trigger> deploy_trigger;  // IL only.
  std::string initial_model;                   // IL: spec.initialModel.name
  std::string deploy_model;                    // IL: spec.deploySpec.model.name
  std::string initial_eval_model;              // IL: spec.evalSpec.initialModel.name
  bool hot_update = false;                     // IL: deploySpec.model.hotUpdateEnabled
  int64_t poll_period_seconds = 60;
  std::optional<api::HardExampleMining> hard_example_mining;
  std::string output_dir;
  std::string credential_name;
  job::RunPolicy run_policy;  // spec.runPolicy (Nereid, optional)

  // Every Model the spec names (empty names skipped).
  std::vector<std::string> ModelNames() const;
};

// trainSpec.trigger / deploySpec.trigger as the edge protocol carries them.
void TriggerToProto(const api::Trigger& trigger, edge::v1::Trigger* out);
// spec.runPolicy (Nereid's additive field; defaults when absent). Type errors go to `reader`.
job::RunPolicy ReadStagedRunPolicy(const kube::Json& object, api::FieldReader* reader);

// The kind `T` (api::IncrementalLearningJob, api::LifelongLearningJob) parsed from `object`'s spec
// (its status is ours to rewrite), with the fields both kinds share and `job->run_policy` set in
// `job`; the parse error, else T::Validate()'s and the run policy's problems, go to `causes`.
// nullopt when the spec does not parse.
template <typename T>
std::optional<T> ParseStagedKind(const kube::Json& object, StagedJob* job,
                                 std::vector<kube::StatusCause>* causes) {
  std::optional<T> parsed = ParseSpec<T>(object, causes);
  if (!parsed.has_value()) return std::nullopt;
  // What both kinds have, under the same names.
  job->meta = parsed->metadata;
  job->dataset = parsed->spec.dataset;
  job->train_template = parsed->spec.train_spec.pod_template;
  job->eval_template = parsed->spec.eval_spec.pod_template;
  job->deploy_template = parsed->spec.deploy_spec.pod_template;
  job->train_trigger = parsed->spec.train_spec.trigger;
  job->output_dir = parsed->spec.output_dir;
  job->credential_name = parsed->spec.credential_name;
  api::FieldReader reader;
  job->run_policy = ReadStagedRunPolicy(object, &reader);
  for (const kube::StatusCause& c : reader.causes()) causes->push_back(c);
  return parsed;
}

// A Model as the controller needs it.
struct ModelRef {
  std::string url;
  std::string format;
  std::string credential_name;  // spec.credentialName: the Secret of an s3:// url
};

// The references of a job, resolved from the informer caches.
struct StagedRefs {
  std::string dataset_node;  // Dataset spec.nodeName: where the triggers run
  std::string dataset_url;
  std::string dataset_format;
  std::map<std::string, ModelRef> models;  // by name

  const ModelRef* Model(const std::string& name) const {
    auto it = models.find(name);
    return it == models.end() ? nullptr : &it->second;
  }
};

// What a stage pod is built from, beyond the job: the stage's condition data (input from the LC)
// and the history the kind looks at (rounds, the latest training output).
struct StageContext {
  std::string_view stage;         // Train | Eval
  const kube::Json* data;         // the stage's condition data (ParseStageData)
  int64_t rounds = 0;             // completed training rounds
  std::string last_train_output;  // url of the latest training output model, "" if none
};

// Helpers of the kinds' StageParams/InferenceParams: a string of the stage input the LC sent
// (`data` is the condition data, e.g. "input.trainDatasetURL"), and a storage mount for the URLs
// that are set (none: no mount).
std::string InputString(const kube::Json& data, const char* key);
void Mount(WorkerParams* params, std::string_view env_name, std::vector<std::string> urls,
           std::string what, bool read_only = true, bool is_dir = false, bool indirect = false);
// ORIGINAL_DATASET_URL of a stage pod: the LC's dataIndexURL when it sent one (an indirect index,
// as Sedna's), else the Dataset's url.
void MountOriginalDataset(WorkerParams* params, const kube::Json& stage_data,
                          const StagedRefs& refs);

class StagedKind {
 public:
  virtual ~StagedKind() = default;

  virtual std::string_view kind() const = 0;  // "IncrementalLearningJob"
  virtual const kube::Resource& resource() const = 0;
  virtual std::string_view controller_name() const = 0;  // "incrementallearning"

  // Parses the object's spec (its status is ignored). Type errors and semantic problems (with
  // field paths) go to `causes`; the result is meaningful only when `causes` stayed empty.
  virtual StagedJob Parse(const kube::Json& object, std::vector<kube::StatusCause>* causes) const = 0;

  // Env and storage of a Train/Eval pod (worker type and base env are added by the caller).
  virtual void StageParams(const StagedJob& job, const StagedRefs& refs, const StageContext& ctx,
                           WorkerParams* params) const = 0;
  // Env and storage of the inference pod, or false when it does not run (yet): LifelongLearningJob
  // has nothing to serve before its first deploy.
  virtual bool InferenceParams(const StagedJob& job, const StagedRefs& refs, int64_t model_updates,
                               WorkerParams* params) const = 0;
  // The Secret the inference pod's s3:// URLs use: the job's credentialName (Sedna's, for what
  // outputDir holds) unless the kind says otherwise.
  virtual std::string InferenceCredential(const StagedJob& job, const StagedRefs& refs) const {
    (void)refs;
    return job.credential_name;
  }

  // The spec the job's edge nodes receive (resource.ref and version are the caller's).
  virtual void FillEdgeSpec(const StagedJob& job, const edge::v1::StageNodes& nodes,
                            const edge::v1::JobStage& current, edge::v1::Resource* resource) const = 0;

  // A worker reported output models (a JSON array): kind-specific status (LifelongLearningJob's
  // knowledgeBase). Returns whether `status` changed.
  virtual bool OnOutputModels(const kube::Json& models, kube::Json* status) const {
    (void)models;
    (void)status;
    return false;
  }
};

}  // namespace nereid::gm
