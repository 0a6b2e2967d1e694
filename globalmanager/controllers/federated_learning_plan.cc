#include "globalmanager/controllers/federated_learning_plan.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/api/dataset.h"
#include "common/api/federated_learning_job.h"
#include "common/api/json_fields.h"
#include "common/api/model.h"
#include "common/api/sedna_contract.h"
#include "common/api/validation.h"
#include "common/job/job_validation.h"
#include "common/job/pod_builder.h"
#include "common/s3/s3_url.h"
#include "common/s3/storage_initializer.h"
#include "common/strings/absl_compat.h"
#include "globalmanager/controllers/model_resolver.h"
#include "globalmanager/controllers/placement.h"
#include "globalmanager/controllers/spec_validity.h"
#include "globalmanager/controllers/worker_template.h"

namespace nereid::gm {
namespace {

using kube::Json;
namespace env = api::env;

constexpr std::string_view kKind = api::kinds::kFederatedLearningJob;

std::string Str(int64_t value) { return std::to_string(value); }

// What the plan reads of a referenced Dataset or Model.
struct StorageRef {
  std::string url;
  std::string format;
  std::string credential_name;
};

template <typename T>
StorageRef StorageOf(const kube::Json& object) {
  std::optional<T> parsed = ReadSpec<T>(object);
  if (!parsed.has_value()) return {};
  return {parsed->spec.url, parsed->spec.format, parsed->spec.credential_name};
}

using Lookup = std::function<absl::StatusOr<kube::ObjectPtr>(std::string_view)>;

// The referenced object's url/format/credentialName (T: api::Dataset or api::Model); when it does
// not exist, a cause in `missing` (reason ModelNotFound / DatasetNotFound: the job waits for it),
// when it cannot be read one in `causes`.
template <typename T>
StorageRef ReferencedStorage(const Lookup& lookup, std::string_view kind, std::string_view name,
                             std::string_view ns, const std::string& field,
                             std::vector<kube::StatusCause>* causes,
                             std::vector<kube::StatusCause>* missing) {
  absl::StatusOr<kube::ObjectPtr> object =
      lookup ? lookup(name) : absl::StatusOr<kube::ObjectPtr>(absl::NotFoundError("no lookup"));
  if (!object.ok()) {
    if (absl::IsNotFound(object.status())) {
      missing->push_back({std::string(kind == api::kinds::kModel ? kModelNotFound
                                                                 : kDatasetNotFound),
                          MissingReferenceMessage(kind, ns, name), field});
    } else {
      causes->push_back({std::string(api::cause_reasons::kInvalid),
                         absl::StrCat("cannot read ", ToAbsl(kind), " \"", ToAbsl(name),
                                      "\": ", object.status().message()),
                         field});
    }
    return {};
  }
  return StorageOf<T>(**object);
}

// The credentialName of `ref` when its `url` is s3:// ("" otherwise).
std::string S3CredentialOf(const StorageRef& ref) {
  return s3::IsS3Url(ref.url) ? ref.credential_name : "";
}

void AddBuildCauses(const absl::Status& status, std::vector<kube::StatusCause>* causes) {
  std::vector<kube::StatusCause> found = kube::Causes(status);
  if (found.empty()) {
    found.push_back({std::string(api::cause_reasons::kInvalid), std::string(status.message()), ""});
  }
  causes->insert(causes->end(), found.begin(), found.end());
}

std::string TrainTaskName(size_t index) { return absl::StrCat(ToAbsl(fl::kTrainTaskPrefix), index); }

bool PodNameFits(std::string_view job_name, std::string_view task) {
  return job::IsDnsLabel(job::PodName(job_name, task, 0));
}

}  // namespace

std::string SelectorTrainTaskName(std::string_view job_name, size_t index, std::string_view node) {
  std::string readable = absl::StrCat(ToAbsl(fl::kTrainTaskPrefix), index, "-", ToAbsl(node));
  if (job::IsDnsLabel(node) && PodNameFits(job_name, readable)) return readable;
  std::string hashed =
      absl::StrCat(ToAbsl(fl::kTrainTaskPrefix), index, "-", ContentHash(Json(std::string(node))).substr(0, 10));
  if (PodNameFits(job_name, hashed)) return hashed;
  return "";
}

bool FlPlan::IsTrainingTask(std::string_view task) const {
  return absl::StartsWith(ToAbsl(task), ToAbsl(fl::kTrainTaskPrefix));
}

std::set<std::string> FlPlan::TrainingNodes() const {
  std::set<std::string> nodes;
  for (const FlTrainingTask& t : training) {
    if (!t.node.empty()) nodes.insert(t.node);
  }
  return nodes;
}

edge::v1::FederatedLearningJobSpec FlPlan::EdgeSpecFor(std::string_view node) const {
  edge::v1::FederatedLearningJobSpec spec;
  spec.set_aggregation_model_name(aggregation_model);
  spec.set_pretrained_model_name(pretrained_model);
  spec.set_transmitter(transmitter);
  for (const FlTrainingTask& t : training) {
    if (t.node != node) continue;
    edge::v1::FederatedLearningJobSpec::TrainingWorker* worker = spec.add_training_workers();
    worker->set_dataset_name(t.dataset);
    worker->set_node_name(t.node);
  }
  return spec;
}

bool FlTrainingSucceeded(const job::JobSpec& spec,
                         const std::map<std::string, job::ReplicaStatus>& counts) {
  int32_t training = 0;
  for (const job::Task& task : spec.tasks) {
    if (!absl::StartsWith(task.name, ToAbsl(fl::kTrainTaskPrefix)) || task.Replicas() == 0) {
      continue;
    }
    training += task.Replicas();
    auto it = counts.find(task.name);
    if (it == counts.end() || it->second.succeeded < task.Replicas()) return false;
  }
  return training > 0;
}

FlPlan PlanFederatedLearningJob(const Json& object, const FlPlanInputs& inputs) {
  FlPlan plan;
  std::vector<kube::StatusCause>& invalid = plan.invalid;

  // Only the spec decides; our own status fields must never make a spec "invalid".
  absl::StatusOr<api::FederatedLearningJob> parsed =
      ParseWithoutStatus<api::FederatedLearningJob>(object);
  if (!parsed.ok()) {
    AddBuildCauses(parsed.status(), &invalid);
    return plan;
  }
  plan.job = *std::move(parsed);
  invalid = plan.job.Validate();
  const api::FederatedLearningJobSpec& fl = plan.job.spec;
  const std::string name = plan.job.metadata.name;
  const std::string ns = plan.job.metadata.ns;

  // The optional, additive runPolicy (common/job), with Sedna's "keep every pod" by default.
  api::FieldReader reader;
  if (const Json* spec_json = kube::FindPath(object, "spec"); spec_json != nullptr) {
    plan.spec.run_policy = job::ReadRunPolicy(*spec_json, "runPolicy", "spec", &reader);
  }
  for (const kube::StatusCause& cause : reader.TakeCauses()) invalid.push_back(cause);
  if (!plan.spec.run_policy.clean_pod_policy.has_value()) {
    plan.spec.run_policy.clean_pod_policy = fl::kDefaultCleanPodPolicy;
  }
  if (!job::IsDns1035Label(name)) {
    api::AddInvalid("metadata.name",
                    absl::StrCat("the job name \"", name,
                                 "\" also names its Services, so it must be a DNS-1035 label: at "
                                 "most 63 lower-case letters, digits and '-', starting with a "
                                 "letter"),
                    &invalid);
  } else if (!PodNameFits(name, fl::kAggregationTask)) {
    api::AddInvalid("metadata.name",
                    absl::StrCat("pod name \"", job::PodName(name, fl::kAggregationTask, 0),
                                 "\" is longer than 63 characters: shorten the job name"),
                    &invalid);
  }
  if (!invalid.empty()) return plan;

  const WorkerOwner owner = WorkerOwner::FromObject(kKind, object);
  plan.aggregation_model = fl.aggregation_worker.model.name;
  plan.pretrained_model = fl.pretrained_model.has_value() ? fl.pretrained_model->name : "";
  plan.transmitter = fl.transmitter.has_value() ? std::string(fl.transmitter->Name()) : "ws";
  plan.aggregation_node = api::TemplateNodeName(fl.aggregation_worker.pod_template);

  // Referenced objects.
  std::vector<kube::StatusCause> missing;
  const StorageRef model = ReferencedStorage<api::Model>(
      inputs.model, api::kinds::kModel, plan.aggregation_model, ns,
      "spec.aggregationWorker.model.name", &invalid, &missing);
  StorageRef pretrained;
  if (!plan.pretrained_model.empty()) {
    pretrained = ReferencedStorage<api::Model>(inputs.model, api::kinds::kModel,
                                               plan.pretrained_model, ns,
                                               "spec.pretrainedModel.name", &invalid, &missing);
  }
  std::vector<StorageRef> datasets(fl.training_workers.size());
  for (size_t i = 0; i < fl.training_workers.size(); ++i) {
    datasets[i] = ReferencedStorage<api::Dataset>(
        inputs.dataset, api::kinds::kDataset, fl.training_workers[i].dataset.name, ns,
        api::JoinPath(api::IndexPath("spec.trainingWorkers", i), "dataset.name"), &invalid,
        &missing);
  }

  // Placement of the training workers.
  for (size_t i = 0; i < fl.training_workers.size(); ++i) {
    const std::string path = api::JoinPath(api::IndexPath("spec.trainingWorkers", i), "template");
    const Json& pod_spec = api::TemplatePodSpec(fl.training_workers[i].pod_template);
    absl::StatusOr<Placement> placement = PlacePodSpec(pod_spec, inputs.nodes);
    if (!placement.ok()) {
      absl::Status detailed = ValidateNodeSelection(pod_spec, api::JoinPath(path, "spec"));
      api::AddInvalid(api::JoinPath(path, "spec"),
                      std::string(detailed.ok() ? placement.status().message() : detailed.message()),
                      &invalid);
      continue;
    }
    const std::string& dataset = fl.training_workers[i].dataset.name;
    if (placement->mode != Placement::Mode::kSelector) {
      const std::string task = TrainTaskName(i);
      if (!PodNameFits(name, task)) {
        api::AddInvalid("metadata.name",
                        absl::StrCat("pod name \"", job::PodName(name, task, 0),
                                     "\" is longer than 63 characters: shorten the job name"),
                        &invalid);
        continue;
      }
      plan.training.push_back(
          {task, i, placement->nodes.empty() ? "" : placement->nodes.front(), dataset});
      continue;
    }
    if (placement->nodes.empty()) plan.unplaced_workers.push_back(i);
    for (const std::string& node : placement->nodes) {
      std::string task = SelectorTrainTaskName(name, i, node);
      if (task.empty()) {
        api::AddInvalid("metadata.name",
                        absl::StrCat("the pod names of trainingWorkers[", i,
                                     "] (<job>-train-<i>-<node>-0) cannot fit in 63 characters: "
                                     "shorten the job name"),
                        &invalid);
        break;
      }
      plan.training.push_back({std::move(task), i, node, dataset, /*selected=*/true});
    }
  }
  if (!invalid.empty()) return plan;
  if (!missing.empty()) {
    plan.missing = MissingReference{missing.front().reason, api::FormatCauses(missing)};
    return plan;
  }

  // Worker templates.
  const std::string agg_service = api::ServiceName(name, api::worker_types::kAggregation);
  const std::string transmitter = plan.transmitter;
  std::vector<StorageMount> shared_mounts;
  shared_mounts.push_back({std::string(env::kModelUrl), {model.url}, false, false,
                           absl::StrCat("model \"", plan.aggregation_model, "\" (spec.url)")});
  if (!pretrained.url.empty()) {
    shared_mounts.push_back({std::string(env::kPretrainedModelUrl), {pretrained.url}, true, false,
                             absl::StrCat("model \"", plan.pretrained_model, "\" (spec.url)")});
  }
  if (fl.transmitter.has_value() && fl.transmitter->s3.has_value()) {
    shared_mounts.push_back({std::string(env::kAggDataPath),
                             {fl.transmitter->s3->agg_data_path}, false, true,
                             "spec.transmitter.s3.aggDataPath", /*download=*/false});
  }
  // The S3 part of each pod: the one Secret its s3:// URLs name (read once per plan).
  std::vector<std::string> shared_secrets = {
      S3CredentialOf(model), S3CredentialOf(pretrained)};
  if (fl.transmitter.has_value() && fl.transmitter->s3.has_value()) {
    shared_secrets.push_back(fl.transmitter->s3->credential_name);
  }
  std::map<std::string, WorkerS3Options> read_secrets;
  auto s3_for = [&](std::vector<std::string> secrets, std::string_view field,
                    WorkerS3Options* out) {
    absl::StatusOr<std::string> secret = s3::SinglePodSecret(secrets);
    if (!secret.ok()) {
      api::AddInvalid(std::string(field), std::string(secret.status().message()), &invalid);
      return false;
    }
    if (!inputs.s3) return true;
    if (auto it = read_secrets.find(*secret); it != read_secrets.end()) {
      *out = it->second;
      return true;
    }
    std::optional<CredentialProblem> problem;
    absl::StatusOr<WorkerS3Options> options = inputs.s3(*secret, &problem);
    if (!options.ok()) {
      plan.credential_problem = problem.value_or(
          CredentialProblem{std::string(credential_reasons::kUnavailable),
                            std::string(options.status().message())});
      return false;
    }
    *out = read_secrets[*secret] = *std::move(options);
    return true;
  };
  auto base_env = [&]() {
    return std::vector<EnvVar>{{std::string(env::kNamespace), ns},
                               {std::string(env::kJobName), name},
                               {std::string(env::kLcServer), inputs.lc_server}};
  };

  WorkerParams agg;
  agg.worker_type = std::string(api::worker_types::kAggregation);
  agg.env = base_env();
  agg.env.push_back({std::string(env::kAggBindPort), Str(api::ports::kAggregation)});
  agg.env.push_back({std::string(env::kParticipantsCount), Str(plan.TrainingPods())});
  agg.env.push_back({std::string(env::kTransmitter), transmitter});
  agg.mounts = shared_mounts;
  agg.restart_policy = "OnFailure";
  if (!s3_for(shared_secrets, "spec.aggregationWorker", &agg.s3)) return plan;
  absl::StatusOr<Json> agg_template = BuildWorkerTemplate(
      owner, fl.aggregation_worker.pod_template, agg, "spec.aggregationWorker.template");
  if (!agg_template.ok()) {
    AddBuildCauses(agg_template.status(), &invalid);
    return plan;
  }
  job::Task agg_task;
  agg_task.name = std::string(fl::kAggregationTask);
  agg_task.replicas = plan.training.empty() ? 0 : 1;  // Nothing to aggregate without trainers.
  agg_task.pod_template = *std::move(agg_template);
  plan.spec.tasks.push_back(std::move(agg_task));

  for (const FlTrainingTask& t : plan.training) {
    const api::TrainingWorker& worker = fl.training_workers[t.worker_index];
    WorkerParams train;
    train.worker_type = std::string(api::worker_types::kTrain);
    train.env = base_env();
    train.env.push_back({std::string(env::kAggIp), ServiceHost(owner, agg_service)});
    train.env.push_back({std::string(env::kAggPort), Str(api::ports::kAggregation)});
    train.env.push_back({std::string(env::kModelName), plan.aggregation_model});
    train.env.push_back({std::string(env::kDatasetName), t.dataset});
    train.env.push_back({std::string(env::kTransmitter), transmitter});
    const StorageRef& dataset = datasets[t.worker_index];
    train.mounts.push_back({std::string(env::kTrainDatasetUrl), {dataset.url}, true,
                            dataset.format == "dir",
                            absl::StrCat("dataset \"", t.dataset, "\" (spec.url)")});
    train.mounts.insert(train.mounts.end(), shared_mounts.begin(), shared_mounts.end());
    train.host_network = true;
    train.dns_policy = "ClusterFirstWithHostNet";
    train.restart_policy = "OnFailure";
    std::vector<std::string> train_secrets = shared_secrets;
    train_secrets.push_back(S3CredentialOf(dataset));
    if (!s3_for(std::move(train_secrets),
                api::IndexPath("spec.trainingWorkers", t.worker_index), &train.s3)) {
      return plan;
    }
    // A selector-placed worker is pinned to its node; a nodeName template keeps its own.
    if (t.selected) train.node_name = t.node;
    absl::StatusOr<Json> built =
        BuildWorkerTemplate(owner, worker.pod_template, train,
                            api::JoinPath(api::IndexPath("spec.trainingWorkers", t.worker_index),
                                          "template"));
    if (!built.ok()) {
      AddBuildCauses(built.status(), &invalid);
      return plan;
    }
    job::Task task;
    task.name = t.task;
    task.replicas = 1;
    task.pod_template = *std::move(built);
    plan.spec.tasks.push_back(std::move(task));
  }

  // The library's own checks (runPolicy bounds); template causes were reported above already.
  for (kube::StatusCause& cause : job::ValidateJobSpec(plan.spec, name, "spec")) {
    if (absl::StartsWith(cause.field, "spec.runPolicy")) invalid.push_back(std::move(cause));
  }

  Json hashed = Json::array();
  for (const job::Task& task : plan.spec.tasks) {
    hashed.push_back({task.name, task.Replicas(), task.pod_template});
  }
  plan.spec_hash = ContentHash(hashed);
  return plan;
}

}  // namespace nereid::gm
