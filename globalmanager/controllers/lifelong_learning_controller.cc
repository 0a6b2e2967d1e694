#include "globalmanager/controllers/lifelong_learning_controller.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/api/lifelong_learning_job.h"
#include "common/api/sedna_contract.h"
#include "common/log/log.h"
#include "common/status/macros.h"
#include "globalmanager/controllers/registry.h"
#include "globalmanager/controllers/stage_data.h"
#include "globalmanager/controllers/stage_machine.h"

namespace nereid::gm {
namespace {

using kube::Json;
namespace env = api::env;

int64_t IntField(const Json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number()) return 0;
  return it->is_number_integer() ? it->get<int64_t>() : static_cast<int64_t>(it->get<double>());
}

std::string DeployIndex(const std::string& output_dir) {
  std::string dir = output_dir;
  while (!dir.empty() && dir.back() == '/') dir.pop_back();
  return absl::StrCat(dir, "/deploy/index.pkl");
}

class LifelongLearning final : public StagedKind {
 public:
  explicit LifelongLearning(std::string kb_server) : kb_server_(std::move(kb_server)) {}

  std::string_view kind() const override { return api::kinds::kLifelongLearningJob; }
  const kube::Resource& resource() const override { return api::resources::LifelongLearningJobs(); }
  std::string_view controller_name() const override { return "lifelonglearning"; }

  StagedJob Parse(const Json& object, std::vector<kube::StatusCause>* causes) const override {
    StagedJob job;
    ParseStagedKind<api::LifelongLearningJob>(object, &job, causes);
    return job;
  }

  void StageParams(const StagedJob&, const StagedRefs& refs, const StageContext& ctx,
                   WorkerParams* params) const override {
    const Json& data = *ctx.data;
    params->env.push_back({std::string(env::kKbServer), kb_server_});
    params->dns_policy = "ClusterFirstWithHostNet";
    if (ctx.stage == stages::kTrain) {
      const bool initial_done = ctx.rounds > 0;
      params->env.push_back(
          {std::string(env::kHasCompletedInitialTraining), initial_done ? "true" : "false"});
      if (initial_done && !ctx.last_train_output.empty()) {
        params->env.push_back({std::string(env::kCloudKbIndex), ctx.last_train_output});
      }
      Mount(params, env::kOutputUrl, {InputString(data, "outputDir")},
            "the round's output directory", /*read_only=*/false, /*is_dir=*/true);
      Mount(params, env::kTrainDatasetUrl, {InputString(data, "dataURL")}, "the round's samples");
      MountOriginalDataset(params, data, refs);
    } else {
      Mount(params, env::kModelUrls, ModelUrls(InputModels(data)), "the models to evaluate");
      Mount(params, env::kOutputUrl, {InputString(data, "outputDir")},
            "the evaluation's output directory", /*read_only=*/false, /*is_dir=*/true);
      Mount(params, env::kTestDatasetUrl, {InputString(data, "dataURL")}, "the evaluation samples");
      MountOriginalDataset(params, data, refs);
    }
  }

  bool InferenceParams(const StagedJob& job, const StagedRefs&, int64_t model_updates,
                       WorkerParams* params) const override {
    if (model_updates < 1) return false;  // Nothing to serve before the first deploy.
    // The index is written by the deploy node's LC; the directory may not exist before.
    Mount(params, env::kModelUrls, {DeployIndex(job.output_dir)}, "the deployed knowledge base",
          /*read_only=*/true);
    params->dns_policy = "ClusterFirstWithHostNet";
    return true;
  }

  void FillEdgeSpec(const StagedJob& job, const edge::v1::StageNodes& nodes,
                    const edge::v1::JobStage& current, edge::v1::Resource* resource) const override {
    edge::v1::LifelongLearningJobSpec* spec = resource->mutable_lifelong_learning_job();
    spec->mutable_dataset()->set_name(job.dataset.name);
    spec->mutable_dataset()->set_train_prob(job.dataset.train_prob);
    TriggerToProto(job.train_trigger, spec->mutable_train_trigger());
    spec->set_output_dir(job.output_dir);
    spec->set_credential_name(job.credential_name);
    *spec->mutable_stage_nodes() = nodes;
    *spec->mutable_current() = current;
  }

  bool OnOutputModels(const Json& models, Json* status) const override {
    std::optional<Json> kb = KnowledgeBaseFromModels(models);
    if (!kb.has_value()) return false;
    auto it = status->find("knowledgeBase");
    if (it != status->end() && *it == *kb) return false;
    (*status)["knowledgeBase"] = *std::move(kb);
    return true;
  }

 private:
  const std::string kb_server_;
};

}  // namespace

std::optional<Json> KnowledgeBaseFromModels(const Json& models) {
  if (!models.is_array() || models.empty()) return std::nullopt;
  api::KnowledgeBase kb;
  const Json& first = models.front();
  if (auto classes = first.find("classes"); classes != first.end() && classes->is_array()) {
    for (const Json& c : *classes) {
      if (c.is_string()) kb.list_of_ai_classes.push_back(c.get<std::string>());
    }
  }
  kb.number_of_ai_classes = static_cast<int64_t>(kb.list_of_ai_classes.size());
  int64_t samples = 0;
  for (const Json& m : models) {
    if (!m.is_object()) continue;
    const int64_t labeled = IntField(m, "number_of_labeled_unseen_sample");
    if (auto current = m.find("current_metric"); current != m.end() && current->is_object()) {
      for (const auto& [model_id, metrics] : current->items()) {
        if (kb.list_of_ai_models.size() >= kMaxKbModels) break;
        api::KbModel am;
        am.model_id = model_id;
        am.number_of_train_samples = labeled;
        // Sedna shows one metric per model: the first one.
        if (metrics.is_object()) {
          for (const auto& [name, value] : metrics.items()) {
            if (value.is_number()) am.average_precision = value.get<double>();
            break;
          }
        }
        kb.list_of_ai_models.push_back(std::move(am));
      }
    }
    samples += labeled;
  }
  kb.number_of_ai_models = static_cast<int64_t>(kb.list_of_ai_models.size());
  kb.number_of_labeled_unseen_sample = samples;
  kb.number_of_unseen_sample = 0;
  return kb.ToJson();
}

std::unique_ptr<StagedKind> LifelongLearningKind(std::string kb_server) {
  return std::make_unique<LifelongLearning>(std::move(kb_server));
}

absl::StatusOr<std::unique_ptr<GmController>> MakeLifelongLearningController(
    ControllerContext& context) {
  return CreateIfServed(context, api::resources::LifelongLearningJobs(),
                        [](const ControllerContext& context) {
                          return StagedJobController::Create(
                              context, LifelongLearningKind(context.settings.kb_server));
                        });
}

}  // namespace nereid::gm
