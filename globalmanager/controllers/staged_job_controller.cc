#include "globalmanager/controllers/staged_job_controller.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/api/dataset.h"
#include "common/api/model.h"
#include "common/api/sedna_contract.h"
#include "common/api/validation.h"
#include "common/job/event_reasons.h"
#include "common/job/job_status.h"
#include "common/job/job_validation.h"
#include "common/job/pod_builder.h"
#include "common/log/log.h"
#include "common/status/macros.h"
#include "common/strings/absl_compat.h"
#include "globalmanager/controllers/controller_events.h"
#include "globalmanager/controllers/edge_dispatcher.h"
#include "globalmanager/controllers/edge_objects.h"
#include "globalmanager/controllers/informer_handlers.h"
#include "globalmanager/controllers/model_requirements.h"
#include "globalmanager/controllers/model_resolver.h"
#include "globalmanager/controllers/placement.h"
#include "globalmanager/controllers/spec_validity.h"
#include "globalmanager/controllers/stage_data.h"
#include "globalmanager/controllers/stage_machine.h"
#include "globalmanager/controllers/staged_job_pass.h"
#include "globalmanager/controllers/status_conditions.h"
#include "globalmanager/controllers/status_writer.h"

namespace nereid::gm {
namespace {

using kube::Json;
using kube::ObjectPtr;
namespace st = staged_status;
using st::Lower;

constexpr char kDatasetIndex[] = "staged-datasets";
constexpr char kModelIndex[] = "staged-models";

}  // namespace

absl::StatusOr<std::unique_ptr<StagedJobController>> StagedJobController::Create(
    const ControllerContext& context, std::unique_ptr<StagedKind> kind, StagedJobOptions options) {
  RETURN_IF_ERROR(context.RequireClientInformersEdge("StagedJobController"));
  if (kind == nullptr) return absl::InvalidArgumentError("StagedJobController: a kind is required");
  std::unique_ptr<StagedJobController> c(
      new StagedJobController(context, std::move(kind), std::move(options)));
  // Which jobs refer to a Dataset / Model, from the parsed spec (a malformed one as far as it
  // parses: its user's edit re-reconciles it anyway).
  const StagedKind* parser = c->kind_.get();
  kube::Indexers indexers;
  indexers[kDatasetIndex] = [parser](const Json& object) -> std::vector<std::string> {
    std::vector<kube::StatusCause> ignored;
    const StagedJob job = parser->Parse(object, &ignored);
    if (job.dataset.name.empty()) return {};
    return {kube::MakeKey(kube::Namespace(object), job.dataset.name)};
  };
  indexers[kModelIndex] = [parser](const Json& object) -> std::vector<std::string> {
    std::vector<kube::StatusCause> ignored;
    std::vector<std::string> keys;
    for (const std::string& name : parser->Parse(object, &ignored).ModelNames()) {
      keys.push_back(kube::MakeKey(kube::Namespace(object), name));
    }
    return keys;
  };
  RETURN_IF_ERROR(c->jobs_->AddIndexers(std::move(indexers)));
  // A Dataset or Model a job refers to appeared, changed its spec or went away (not a Dataset's
  // count reports).
  StagedJobController* raw = c.get();
  c->datasets_->AddEventHandler(
      OnSpecChange([raw](const ObjectPtr& obj) { raw->EnqueueReferrers(kDatasetIndex, obj); }));
  c->models_->AddEventHandler(
      OnSpecChange([raw](const ObjectPtr& obj) { raw->EnqueueReferrers(kModelIndex, obj); }));
  RETURN_IF_ERROR(RegisterReportSink(context, c->kind_->kind(), c.get()));
  return c;
}

StagedJobController::StagedJobController(const ControllerContext& context,
                                         std::unique_ptr<StagedKind> kind, StagedJobOptions options)
    : LibraryJobController(std::string(kind->controller_name()), context, kind->resource(),
                           kind->kind(), {.reconcile = options.job}),
      kind_(std::move(kind)),
      options_(std::move(options)),
      datasets_(Read(api::resources::Datasets())),
      models_(Read(api::resources::Models())),
      placements_(context.edge, Lower(kind_->kind())) {}

StagedJobController::~StagedJobController() { Stop(); }

std::string StagedJobController::Requester(const std::string& key) const {
  return absl::StrCat(ToAbsl(kind_->kind()), "/", key);
}

void StagedJobController::EnqueueReferrers(const std::string& index, const ObjectPtr& object) {
  absl::StatusOr<std::vector<ObjectPtr>> jobs =
      jobs_->GetLister().ByIndex(index, kube::Key(*object));
  if (!jobs.ok()) return;
  for (const ObjectPtr& job : *jobs) Enqueue(kube::Key(*job));
}

StagedJob StagedJobController::ParseAndCheck(const Json& object,
                                             std::vector<kube::StatusCause>* causes) const {
  StagedJob job = kind_->Parse(object, causes);
  if (!causes->empty()) return job;
  const WorkerOwner owner = WorkerOwner::FromObject(kind_->kind(), object);
  struct Worker {
    const api::PodTemplate* tmpl;
    std::string_view type;
    std::string field;
  };
  const Worker workers[] = {
      {&job.train_template, "train", "spec.trainSpec.template"},
      {&job.eval_template, "eval", "spec.evalSpec.template"},
      {&job.deploy_template, kInferenceWorker, "spec.deploySpec.template"},
  };
  job::JobSpec library_view;
  library_view.run_policy = job.run_policy;
  for (const Worker& w : workers) {
    WorkerParams params;
    params.worker_type = std::string(w.type);
    std::vector<kube::StatusCause> found = CheckWorkerTemplate(owner, *w.tmpl, params, w.field);
    causes->insert(causes->end(), found.begin(), found.end());
    if (const Json* spec = kube::FindPath(*w.tmpl, "spec")) {
      absl::Status s = ValidateNodeSelection(*spec, absl::StrCat(w.field, ".spec"));
      if (!s.ok()) api::AddInvalid(absl::StrCat(w.field, ".spec"), std::string(s.message()), causes);
    }
    if (w.type != kInferenceWorker) {
      job::Task t;
      t.name = std::string(w.type);
      t.pod_template = *w.tmpl;
      library_view.tasks.push_back(std::move(t));
    }
  }
  // What the common job library would refuse at run time (names, runPolicy bounds).
  std::vector<kube::StatusCause> library = job::ValidateJobSpec(library_view, owner.name);
  for (kube::StatusCause& cause : library) {
    // Tasks are this controller's, not the user's: point at the job instead.
    if (absl::StartsWith(cause.field, "spec.tasks")) cause.field = "metadata.name";
    causes->push_back(std::move(cause));
  }
  if (job.run_policy.ttl_seconds_after_finished.has_value()) {
    api::AddInvalid("spec.runPolicy.ttlSecondsAfterFinished",
                    absl::StrCat("not supported: an ", ToAbsl(kind_->kind()),
                                 " never finishes (it loops Train -> Eval -> Deploy)"),
                    causes);
  }
  return job;
}

bool StagedJobController::Resolve(const StagedJob& job, StagedRefs* refs, std::string* reason,
                                  std::string* message) const {
  const std::string ns = job.meta.ns;
  absl::StatusOr<api::Dataset> dataset =
      ResolveDataset(datasets_->GetLister(), ns, job.dataset.name);
  if (!dataset.ok()) {
    *reason = std::string(kDatasetNotFound);
    *message = std::string(dataset.status().message());
    return false;
  }
  const api::DatasetSpec& dataset_spec = dataset->spec;
  refs->dataset_node = dataset_spec.node_name;
  refs->dataset_url = dataset_spec.url;
  refs->dataset_format = dataset_spec.format;
  if (refs->dataset_node.empty()) {
    *reason = std::string(kDatasetNotFound);
    *message = absl::StrCat("Dataset ", job.dataset.name, " has no spec.nodeName");
    return false;
  }
  for (const std::string& name : job.ModelNames()) {
    absl::StatusOr<api::Model> model = ResolveModel(models_->GetLister(), ns, name);
    if (!model.ok()) {
      *reason = std::string(kModelNotFound);
      *message = std::string(model.status().message());
      return false;
    }
    const api::ModelSpec& model_spec = model->spec;
    refs->models[name] = ModelRef{model_spec.url, model_spec.format, model_spec.credential_name};
  }
  return true;
}

absl::Status StagedJobController::Forget(const std::string& key) {
  RETURN_IF_ERROR(placements_.Forget(key));
  if (context().models != nullptr) context().models->ReleaseAll(Requester(key));
  expectations_.Delete(key);
  return absl::OkStatus();
}

absl::Status StagedJobController::RecordNotRunnable(const std::string& key,
                                                    const ObjectPtr& object,
                                                    std::string_view reason,
                                                    const std::string& message) {
  // Nothing of a job that cannot run reaches the edge; its pods are left as they are (a fixed
  // spec picks them up again).
  RETURN_IF_ERROR(placements_.Forget(key));
  if (context().models != nullptr) context().models->ReleaseAll(Requester(key));
  return RecordSpecInvalid(context(), kind_->resource(), object, reason, message,
                           st::kSpecValidity);
}

absl::StatusOr<kube::ReconcileResult> StagedJobController::Reconcile(const std::string& key) {
  ASSIGN_OR_RETURN(const kube::ObjectPtr object,
                   LiveOrForget(jobs_, key, [&] { return Forget(key); }));
  if (object == nullptr) return kube::ReconcileResult{};
  std::vector<kube::StatusCause> causes;
  StagedJob job = ParseAndCheck(*object, &causes);
  if (!causes.empty()) {
    RETURN_IF_ERROR(RecordNotRunnable(key, object, kInvalidSpecReason, api::FormatCauses(causes)));
    return kube::ReconcileResult{};
  }
  StagedRefs refs;
  std::string reason;
  std::string message;
  if (!Resolve(job, &refs, &reason, &message)) {
    RETURN_IF_ERROR(RecordNotRunnable(key, object, reason, message));
    return kube::ReconcileResult{};
  }
  if (!expectations_.Satisfied(key, kube::ResourceVersion(*object))) {
    LOG(DEBUG) << kind_->kind() << " " << key << ": waiting for the caches to catch up";
    return kube::ReconcileResult{.requeue_after = expectations_.TimeToExpiry(key)};
  }
  Pass pass(this, key, object, std::move(job), std::move(refs));
  return pass.Run();
}

}  // namespace nereid::gm
