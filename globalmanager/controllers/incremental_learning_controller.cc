#include "globalmanager/controllers/incremental_learning_controller.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/api/incremental_learning_job.h"
#include "common/api/sedna_contract.h"
#include "common/log/log.h"
#include "common/status/macros.h"
#include "common/strings/absl_compat.h"
#include "globalmanager/controllers/registry.h"
#include "globalmanager/controllers/stage_data.h"
#include "globalmanager/controllers/stage_machine.h"

namespace nereid::gm {
namespace {

using kube::Json;
namespace env = api::env;

class IncrementalLearning final : public StagedKind {
 public:
  std::string_view kind() const override { return api::kinds::kIncrementalLearningJob; }
  const kube::Resource& resource() const override {
    return api::resources::IncrementalLearningJobs();
  }
  std::string_view controller_name() const override { return "incrementallearning"; }

  StagedJob Parse(const Json& object, std::vector<kube::StatusCause>* causes) const override {
    StagedJob job;
    auto il = ParseStagedKind<api::IncrementalLearningJob>(object, &job, causes);
    if (!il.has_value()) return job;

    const api::IncrementalLearningJobSpec& s = il->spec;
    job.deploy_trigger = s.deploy_spec.trigger;
    job.initial_model = s.initial_model.name;
    job.deploy_model = s.deploy_spec.model.name;
    if (s.eval_spec.initial_model.has_value()) job.initial_eval_model = s.eval_spec.initial_model->name;
    job.hot_update = s.deploy_spec.model.hot_update_enabled;
    job.poll_period_seconds = s.deploy_spec.model.PollPeriodSeconds();
    job.hard_example_mining = s.deploy_spec.hard_example_mining;
    return job;
  }

  void StageParams(const StagedJob&, const StagedRefs& refs, const StageContext& ctx,
                   WorkerParams* params) const override {
    const Json& data = *ctx.data;
    const std::vector<std::string> models = ModelUrls(InputModels(data));
    if (ctx.stage == stages::kTrain) {
      Mount(params, env::kBaseModelUrl, {models.empty() ? "" : models.front()}, "the base model");
      Mount(params, env::kModelUrl, {InputString(data, "outputDir")},
            "the round's output directory", /*read_only=*/false, /*is_dir=*/true);
      Mount(params, env::kTrainDatasetUrl, {InputString(data, "dataURL")}, "the round's samples");
      MountOriginalDataset(params, data, refs);
    } else {
      Mount(params, env::kModelUrls, models, "the models to evaluate");
      Mount(params, env::kTestDatasetUrl, {InputString(data, "dataURL")}, "the evaluation samples");
      MountOriginalDataset(params, data, refs);
    }
  }

  bool InferenceParams(const StagedJob& job, const StagedRefs& refs, int64_t,
                       WorkerParams* params) const override {
    const ModelRef* model = refs.Model(job.deploy_model);
    if (model == nullptr) return false;
    Mount(params, env::kModelUrl, {model->url}, absl::StrCat("model \"", job.deploy_model, "\""));
    if (job.hard_example_mining.has_value()) {
      Json parameters = Json::array();
      for (const api::ParaSpec& p : job.hard_example_mining->parameters) {
        parameters.push_back({{"key", p.key}, {"value", p.value}});
      }
      params->env.push_back({std::string(env::kHemName), job.hard_example_mining->name});
      params->env.push_back({std::string(env::kHemParameters), parameters.dump()});
    }
    if (job.hot_update) {
      params->env.push_back({std::string(env::kModelHotUpdate), "true"});
      params->env.push_back(
          {std::string(env::kModelPollPeriodSeconds), absl::StrCat(job.poll_period_seconds)});
      params->env.push_back({std::string(env::kModelHotUpdateConfig),
                             absl::StrCat(ToAbsl(api::paths::kModelHotUpdateContainerPrefix), "/",
                                          ToAbsl(api::paths::kModelHotUpdateConfigFile))});
    }
    return true;
  }

  // The deploy Model's own Secret, as Sedna's createInferPod; the job's when the Model names
  // none (the LC copied the trained model there with the job's credential).
  std::string InferenceCredential(const StagedJob& job, const StagedRefs& refs) const override {
    const ModelRef* model = refs.Model(job.deploy_model);
    if (model != nullptr && !model->credential_name.empty()) return model->credential_name;
    return job.credential_name;
  }

  void FillEdgeSpec(const StagedJob& job, const edge::v1::StageNodes& nodes,
                    const edge::v1::JobStage& current, edge::v1::Resource* resource) const override {
    edge::v1::IncrementalLearningJobSpec* spec = resource->mutable_incremental_learning_job();
    spec->mutable_dataset()->set_name(job.dataset.name);
    spec->mutable_dataset()->set_train_prob(job.dataset.train_prob);
    spec->set_initial_model_name(job.initial_model);
    TriggerToProto(job.train_trigger, spec->mutable_train_trigger());
    spec->set_initial_eval_model_name(job.initial_eval_model);
    spec->set_deploy_model_name(job.deploy_model);
    spec->set_hot_update_enabled(job.hot_update);
    spec->set_poll_period_seconds(static_cast<int32_t>(job.poll_period_seconds));
    if (job.deploy_trigger.has_value()) TriggerToProto(*job.deploy_trigger, spec->mutable_deploy_trigger());
    if (job.hard_example_mining.has_value()) {
      spec->mutable_hard_example_mining()->set_name(job.hard_example_mining->name);
      for (const api::ParaSpec& p : job.hard_example_mining->parameters) {
        edge::v1::KeyValue* kv = spec->mutable_hard_example_mining()->add_parameters();
        kv->set_key(p.key);
        kv->set_value(p.value);
      }
    }
    spec->set_output_dir(job.output_dir);
    spec->set_credential_name(job.credential_name);
    *spec->mutable_stage_nodes() = nodes;
    *spec->mutable_current() = current;
  }
};

}  // namespace

std::unique_ptr<StagedKind> IncrementalLearningKind() {
  return std::make_unique<IncrementalLearning>();
}

absl::StatusOr<std::unique_ptr<GmController>> MakeIncrementalLearningController(
    ControllerContext& context) {
  return CreateIfServed(context, api::resources::IncrementalLearningJobs(),
                        [](const ControllerContext& context) {
                          return StagedJobController::Create(context, IncrementalLearningKind());
                        });
}

}  // namespace nereid::gm
