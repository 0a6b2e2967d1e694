#include "globalmanager/controllers/object_search_controller.h"

#include <optional>
#include <utility>
#include <vector>

#include "common/api/object_search_service.h"
#include "common/api/sedna_contract.h"
#include "common/status/macros.h"
#include "globalmanager/controllers/registry.h"
#include "globalmanager/controllers/spec_validity.h"

namespace nereid::gm {
namespace {

using kube::Json;

constexpr std::string_view kKind = api::kinds::kObjectSearchService;

const kube::Resource& Services() { return api::resources::ObjectSearchServices(); }

}  // namespace

absl::StatusOr<std::unique_ptr<ObjectSearchController>> ObjectSearchController::Create(
    const ControllerContext& context) {
  RETURN_IF_ERROR(context.RequireClientInformersEdge("ObjectSearchController"));
  return std::unique_ptr<ObjectSearchController>(new ObjectSearchController(context));
}

ObjectSearchController::ObjectSearchController(const ControllerContext& context)
    : MultiEdgeServiceController("objectsearch", context, {kKind, &Services(), true}) {}

ServicePlan ObjectSearchController::MakePlan(const Json& object) const {
  std::vector<kube::StatusCause> causes;
  std::optional<api::ObjectSearchService> parsed =
      ParseSpec<api::ObjectSearchService>(object, &causes);
  if (!parsed.has_value()) return Invalid(std::move(causes));
  return PlanTrackingPipeline(object, parsed->spec.reid_workers, &parsed->spec.user_worker,
                              parsed->spec.tracking_workers, std::move(causes));
}

absl::StatusOr<std::unique_ptr<GmController>> MakeObjectSearchController(
    ControllerContext& context) {
  return CreateIfServed(context, Services(), &ObjectSearchController::Create);
}

}  // namespace nereid::gm
