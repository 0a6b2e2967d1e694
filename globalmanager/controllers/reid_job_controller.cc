#include "globalmanager/controllers/reid_job_controller.h"

#include <utility>

#include "common/api/reid_job.h"
#include "common/api/sedna_contract.h"
#include "common/api/validation.h"
#include "common/status/macros.h"
#include "globalmanager/controllers/registry.h"

namespace nereid::gm {
namespace {

absl::StatusOr<InferenceJobPlan> PlanReidJob(const kube::Json& object) {
  ASSIGN_OR_RETURN(api::ReidJob job, api::ReidJob::FromJson(object));
  if (std::vector<kube::StatusCause> causes = job.Validate(); !causes.empty()) {
    return api::InvalidObjectError(api::kinds::kReidJob, job.metadata.name, std::move(causes));
  }
  InferenceJobPlan plan;
  plan.job = std::move(job.spec.job);
  plan.kafka = job.spec.kafka_support.value_or(false);
  return plan;
}

}  // namespace

const InferenceJobKind& ReidJobKind() {
  static const InferenceJobKind kind = {
      .kind = api::kinds::kReidJob,
      .name = "reid",
      .resource = &api::resources::ReidJobs(),
      .worker_type = api::worker_types::kReid,
      .service_port = api::ports::kReid,
      .reports_to_metrics = false,
      .plan = &PlanReidJob,
  };
  return kind;
}

absl::StatusOr<std::unique_ptr<GmController>> MakeReidJobController(ControllerContext& context) {
  return CreateIfServed(context, *ReidJobKind().resource, [](const ControllerContext& c) {
    return InferenceJobController::Create(c, ReidJobKind());
  });
}

}  // namespace nereid::gm
