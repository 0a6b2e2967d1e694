#include "globalmanager/controllers/registry.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/log/log.h"
#include "globalmanager/controllers/dataset_controller.h"
#include "globalmanager/controllers/distributed_job_controller.h"
#include "globalmanager/controllers/feature_extraction_controller.h"
#include "globalmanager/controllers/federated_learning_controller.h"
#include "globalmanager/controllers/incremental_learning_controller.h"
#include "globalmanager/controllers/joint_inference_controller.h"
#include "globalmanager/controllers/lifelong_learning_controller.h"
#include "globalmanager/controllers/model_controller.h"
#include "globalmanager/controllers/reid_job_controller.h"
#include "globalmanager/controllers/video_analytics_controller.h"
#include "globalmanager/controllers/tracking_pipeline_controller.h"

namespace nereid::gm {

absl::StatusOr<bool> ServedOrLogOff(const ControllerContext& context,
                                    const kube::Resource& resource) {
  if (context.client == nullptr) return absl::InvalidArgumentError("the context has no client");
  absl::StatusOr<bool> served = context.client->IsServed(resource);
  if (served.ok() && !*served) {
    LOG(WARNING) << "controllers: " << resource.resource << "." << resource.group
                 << " is not served (CRD not installed); the " << resource.kind
                 << " controller is off";
  }
  return served;
}

absl::Status ControllerRegistry::Add(std::string name, ControllerFactory factory) {
  for (const Entry& entry : entries_) {
    if (entry.name == name) {
      return absl::AlreadyExistsError(absl::StrCat("controller ", name, " is registered twice"));
    }
  }
  entries_.push_back({std::move(name), std::move(factory)});
  return absl::OkStatus();
}

std::vector<std::string> ControllerRegistry::Names() const {
  std::vector<std::string> names;
  for (const Entry& entry : entries_) names.push_back(entry.name);
  return names;
}

absl::StatusOr<std::vector<std::unique_ptr<GmController>>> ControllerRegistry::CreateAll(
    ControllerContext& context) const {
  std::vector<std::unique_ptr<GmController>> controllers;
  for (const Entry& entry : entries_) {
    absl::StatusOr<std::unique_ptr<GmController>> controller = entry.factory(context);
    if (!controller.ok()) {
      return absl::Status(controller.status().code(),
                          absl::StrCat("controller ", entry.name, ": ",
                                       controller.status().message()));
    }
    if (*controller == nullptr) continue;  // The factory chose to skip it (logged).
    controllers.push_back(*std::move(controller));
  }
  LOG(INFO) << "controllers: " << controllers.size() << " created";
  return controllers;
}

ControllerRegistry DefaultRegistry() {
  ControllerRegistry registry;
  // Each line: a kind's controller. Order: Model first (its ModelRequirements go into the context
  // for the controllers after it).
  absl::Status status = registry.Add("Model", MakeModelController);
  status.Update(registry.Add("Dataset", MakeDatasetController));
  status.Update(registry.Add("JointInferenceService", MakeJointInferenceController));
  status.Update(registry.Add("DistributedJob", MakeDistributedJobController));
  status.Update(registry.Add("FederatedLearningJob", MakeFederatedLearningController));
  status.Update(registry.Add("IncrementalLearningJob", MakeIncrementalLearningController));
  status.Update(registry.Add("LifelongLearningJob", MakeLifelongLearningController));
  status.Update(registry.Add("VideoAnalyticsJob", MakeVideoAnalyticsController));
  status.Update(registry.Add("ReidJob", MakeReidJobController));
  status.Update(registry.Add("FeatureExtractionService", MakeFeatureExtractionController));
  status.Update(registry.Add("ObjectSearchService", MakeObjectSearchController));
  status.Update(registry.Add("ObjectTrackingService", MakeObjectTrackingController));
  if (!status.ok()) LOG(ERROR) << "controller registry: " << status;  // Only a duplicate name.
  return registry;
}

}  // namespace nereid::gm
