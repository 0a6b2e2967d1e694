#include "globalmanager/controllers/object_tracking_controller.h"

#include <optional>
#include <utility>
#include <vector>

#include "common/api/object_tracking_service.h"
#include "common/api/sedna_contract.h"
#include "common/status/macros.h"
#include "globalmanager/controllers/registry.h"
#include "globalmanager/controllers/spec_validity.h"

namespace nereid::gm {
namespace {

using kube::Json;

constexpr std::string_view kKind = api::kinds::kObjectTrackingService;

const kube::Resource& Services() { return api::resources::ObjectTrackingServices(); }

}  // namespace

absl::StatusOr<std::unique_ptr<ObjectTrackingController>> ObjectTrackingController::Create(
    const ControllerContext& context) {
  RETURN_IF_ERROR(context.RequireClientInformersEdge("ObjectTrackingController"));
  return std::unique_ptr<ObjectTrackingController>(new ObjectTrackingController(context));
}

ObjectTrackingController::ObjectTrackingController(const ControllerContext& context)
    : MultiEdgeServiceController("objecttracking", context, {kKind, &Services(), true}) {}

ServicePlan ObjectTrackingController::MakePlan(const Json& object) const {
  std::vector<kube::StatusCause> causes;
  std::optional<api::ObjectTrackingService> parsed =
      ParseSpec<api::ObjectTrackingService>(object, &causes);
  if (!parsed.has_value()) return Invalid(std::move(causes));
  return PlanTrackingPipeline(object, parsed->spec.reid_workers, nullptr,
                              parsed->spec.tracking_workers, std::move(causes));
}

absl::StatusOr<std::unique_ptr<GmController>> MakeObjectTrackingController(
    ControllerContext& context) {
  return CreateIfServed(context, Services(), &ObjectTrackingController::Create);
}

}  // namespace nereid::gm
