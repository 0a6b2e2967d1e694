#include "globalmanager/controllers/video_analytics_controller.h"

#include <utility>

#include "common/api/sedna_contract.h"
#include "common/api/validation.h"
#include "common/api/video_analytics_job.h"
#include "common/status/macros.h"
#include "globalmanager/controllers/registry.h"

namespace nereid::gm {
namespace {

absl::StatusOr<InferenceJobPlan> PlanVideoAnalyticsJob(const kube::Json& object) {
  ASSIGN_OR_RETURN(api::VideoAnalyticsJob job, api::VideoAnalyticsJob::FromJson(object));
  if (std::vector<kube::StatusCause> causes = job.Validate(); !causes.empty()) {
    return api::InvalidObjectError(api::kinds::kVideoAnalyticsJob, job.metadata.name,
                                   std::move(causes));
  }
  InferenceJobPlan plan;
  plan.job = std::move(job.spec.job);
  plan.kafka = job.spec.kafka_support.value_or(false);
  plan.model_name = job.spec.model.name;
  return plan;
}

}  // namespace

const InferenceJobKind& VideoAnalyticsJobKind() {
  static const InferenceJobKind kind = {
      .kind = api::kinds::kVideoAnalyticsJob,
      .name = "videoanalytics",
      .resource = &api::resources::VideoAnalyticsJobs(),
      .worker_type = api::worker_types::kVideoAnalytics,
      .service_port = api::ports::kVideoAnalytics,
      .reports_to_metrics = true,
      .plan = &PlanVideoAnalyticsJob,
  };
  return kind;
}

absl::StatusOr<std::unique_ptr<GmController>> MakeVideoAnalyticsController(
    ControllerContext& context) {
  return CreateIfServed(context, *VideoAnalyticsJobKind().resource, [](const ControllerContext& c) {
    return InferenceJobController::Create(c, VideoAnalyticsJobKind());
  });
}

}  // namespace nereid::gm
