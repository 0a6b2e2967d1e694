#include "globalmanager/controllers/tracking_pipeline_controller.h"

#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "common/api/sedna_contract.h"
#include "common/status/macros.h"
#include "globalmanager/controllers/registry.h"
#include "globalmanager/controllers/spec_validity.h"

namespace nereid::gm {
namespace {

// What tells the two kinds apart.
template <typename Service>
struct TrackingKind;

template <>
struct TrackingKind<api::ObjectSearchService> {
  static constexpr std::string_view kKind = api::kinds::kObjectSearchService;
  static constexpr std::string_view kName = "objectsearch";
  static constexpr std::string_view kController = "ObjectSearchController";
  static const kube::Resource& Resource() { return api::resources::ObjectSearchServices(); }
  static const api::TemplateWorker* UserWorker(const api::ObjectSearchService& service) {
    return &service.spec.user_worker;
  }
};

template <>
struct TrackingKind<api::ObjectTrackingService> {
  static constexpr std::string_view kKind = api::kinds::kObjectTrackingService;
  static constexpr std::string_view kName = "objecttracking";
  static constexpr std::string_view kController = "ObjectTrackingController";
  static const kube::Resource& Resource() { return api::resources::ObjectTrackingServices(); }
  static const api::TemplateWorker* UserWorker(const api::ObjectTrackingService&) {
    return nullptr;
  }
};

}  // namespace

template <typename Service>
absl::StatusOr<std::unique_ptr<TrackingPipelineController<Service>>>
TrackingPipelineController<Service>::Create(const ControllerContext& context) {
  RETURN_IF_ERROR(context.RequireClientInformersEdge(TrackingKind<Service>::kController));
  return std::unique_ptr<TrackingPipelineController>(new TrackingPipelineController(context));
}

template <typename Service>
TrackingPipelineController<Service>::TrackingPipelineController(const ControllerContext& context)
    : MultiEdgeServiceController(std::string(TrackingKind<Service>::kName), context,
                                 {TrackingKind<Service>::kKind, &TrackingKind<Service>::Resource(),
                                  /*owns_pods=*/true}) {}

template <typename Service>
ServicePlan TrackingPipelineController<Service>::MakePlan(const kube::Json& object) const {
  std::vector<kube::StatusCause> causes;
  std::optional<Service> parsed = ParseSpec<Service>(object, &causes);
  if (!parsed.has_value()) return Invalid(std::move(causes));
  return PlanTrackingPipeline(object, parsed->spec.reid_workers,
                              TrackingKind<Service>::UserWorker(*parsed),
                              parsed->spec.tracking_workers, std::move(causes));
}

template class TrackingPipelineController<api::ObjectSearchService>;
template class TrackingPipelineController<api::ObjectTrackingService>;

absl::StatusOr<std::unique_ptr<GmController>> MakeObjectSearchController(
    ControllerContext& context) {
  return CreateIfServed(context, api::resources::ObjectSearchServices(),
                        &ObjectSearchController::Create);
}

absl::StatusOr<std::unique_ptr<GmController>> MakeObjectTrackingController(
    ControllerContext& context) {
  return CreateIfServed(context, api::resources::ObjectTrackingServices(),
                        &ObjectTrackingController::Create);
}

}  // namespace nereid::gm
