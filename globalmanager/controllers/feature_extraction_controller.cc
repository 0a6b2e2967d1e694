#include "globalmanager/controllers/feature_extraction_controller.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/api/feature_extraction_service.h"
#include "common/api/model.h"
#include "common/api/sedna_contract.h"
#include "common/status/macros.h"
#include "globalmanager/controllers/model_resolver.h"
#include "globalmanager/controllers/registry.h"
#include "globalmanager/controllers/s3_credentials.h"
#include "globalmanager/controllers/spec_validity.h"
#include "globalmanager/controllers/worker_metrics_report.h"

namespace nereid::gm {
namespace {

using kube::Json;
namespace v1 = edge::v1;

constexpr std::string_view kKind = api::kinds::kFeatureExtractionService;

const kube::Resource& Services() { return api::resources::FeatureExtractionServices(); }

}  // namespace

absl::StatusOr<std::unique_ptr<FeatureExtractionController>> FeatureExtractionController::Create(
    const ControllerContext& context) {
  RETURN_IF_ERROR(context.RequireClientInformersEdge("FeatureExtractionController"));
  std::unique_ptr<FeatureExtractionController> controller(
      new FeatureExtractionController(context));
  RETURN_IF_ERROR(controller->WatchModels([](const Json& object) {
    std::optional<api::FeatureExtractionService> fe =
        ReadSpec<api::FeatureExtractionService>(object);
    if (!fe.has_value() || fe->spec.model.name.empty()) return std::vector<std::string>{};
    return std::vector<std::string>{fe->spec.model.name};
  }));
  RETURN_IF_ERROR(RegisterReportSink(context, kKind, controller.get()));
  return controller;
}

FeatureExtractionController::FeatureExtractionController(const ControllerContext& context)
    : MultiEdgeServiceController(
          "featureextraction", context,
          {kKind, &Services(), false, [](std::string_view node, v1::Resource* resource) {
             v1::InferenceJobSpec* spec = resource->mutable_feature_extraction_service();
             spec->set_node_name(std::string(node));
             spec->set_worker_type(std::string(api::worker_types::kFeatureExtraction));
           }}) {}

ServicePlan FeatureExtractionController::MakePlan(const Json& object) const {
  std::vector<kube::StatusCause> causes;
  std::optional<api::FeatureExtractionService> parsed =
      ParseSpec<api::FeatureExtractionService>(object, &causes);
  if (!parsed.has_value()) return Invalid(std::move(causes));
  const api::FeatureExtractionService& fe = *parsed;
  CheckNodeSelections({{&fe.spec.deployment.pod_template, "spec.template"}}, &causes);
  if (!causes.empty()) return Invalid(std::move(causes));

  const std::string ns = kube::Namespace(object);
  absl::StatusOr<api::Model> model = FindModel(ns, fe.spec.model.name);
  if (!model.ok()) return Waiting(kModelNotFound, std::string(model.status().message()));

  // The Model's Secret (s3:// models only), for the storage-initializer and its credential env.
  const api::ModelSpec& model_spec = model->spec;
  CredentialProblem problem;
  absl::StatusOr<WorkerS3Options> s3 =
      ReadModelS3(context(), ns, model_spec.url, model_spec.credential_name, &problem);
  if (!s3.ok()) return Waiting(problem.reason, problem.message);

  const WorkerOwner owner = WorkerOwner::FromObject(kKind, object);
  WorkerBuild build;
  build.params.s3 = *std::move(s3);
  build.worker_type = std::string(api::worker_types::kFeatureExtraction);
  build.field = "spec.template";
  build.params.env = ReportEnv(owner, StableWorkerName(owner, "", build.worker_type),
                                      context().settings.lc_server);
  if (fe.spec.kafka_support.value_or(false)) {
    build.params.env.push_back({std::string(api::env::kKafkaEnabled), "true"});
  }
  StorageMount model_mount;
  model_mount.env_name = std::string(api::env::kModelUrl);
  model_mount.urls = {model_spec.url};
  model_mount.read_only = true;
  model_mount.what = absl::StrCat("model \"", fe.spec.model.name, "\" (spec.url)");
  build.params.mounts.push_back(std::move(model_mount));

  ServicePlan plan;
  absl::Status added = AddDeploymentWorker(
      owner, fe.spec.deployment.pod_template, std::move(build), fe.spec.deployment.Replicas(),
      fe.spec.deployment.extra, api::ports::kFeatureExtraction,
      [this](const Json& spec) { return EdgeNodesOf(spec); }, &plan.children);
  if (!added.ok()) return Invalid(added, "spec.template");
  const std::string model_key = kube::MakeKey(ns, fe.spec.model.name);
  for (const EdgeWorker& w : plan.children.edge_workers) {
    plan.children.model_needs.push_back({model_key, w.node});
  }
  return plan;
}

ReportOutcome FeatureExtractionController::HandleReport(std::string_view node,
                                                        const v1::StatusReport& report) {
  const v1::ObjectRef& ref = report.ref();
  const std::string key = kube::MakeKey(ref.namespace_(), ref.name());
  if (ref.kind() != kKind || !report.has_worker()) {
    return RejectedPayload(report, "a worker report of a FeatureExtractionService");
  }
  std::vector<api::Metric> metrics;
  if (std::optional<ReportOutcome> bad = ReadWorkerMetrics(report, &metrics)) return *bad;
  kube::ObjectPtr cached;
  if (absl::StatusOr<kube::ObjectPtr> hit = services()->GetLister().GetByKey(key); hit.ok()) {
    cached = *std::move(hit);
  }
  return WriteWorkerMetrics(context(), Services(), std::move(cached), node, report,
                            std::move(metrics), {.max_metrics = kMaxServiceMetrics});
}

absl::StatusOr<std::unique_ptr<GmController>> MakeFeatureExtractionController(
    ControllerContext& context) {
  return CreateIfServed(context, Services(), &FeatureExtractionController::Create);
}

}  // namespace nereid::gm
