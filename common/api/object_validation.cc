#include "common/api/object_validation.h"

#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/api/dataset.h"
#include "common/api/feature_extraction_service.h"
#include "common/api/federated_learning_job.h"
#include "common/api/incremental_learning_job.h"
#include "common/api/joint_inference_service.h"
#include "common/api/lifelong_learning_job.h"
#include "common/api/model.h"
#include "common/api/object_search_service.h"
#include "common/api/object_tracking_service.h"
#include "common/api/reid_job.h"
#include "common/api/sedna_contract.h"
#include "common/api/video_analytics_job.h"

namespace nereid::api {

namespace {
template <typename Kind>
absl::StatusOr<std::vector<kube::StatusCause>> ParseAndValidate(const kube::Json& object) {
  absl::StatusOr<Kind> parsed = Kind::FromJson(object);
  if (!parsed.ok()) return parsed.status();
  return parsed->Validate();
}

struct Registry {
  absl::Mutex mu;
  std::map<std::string, ObjectValidator, std::less<>> validators ABSL_GUARDED_BY(mu);
};

Registry& Validators() {
  static Registry* const registry = new Registry;  // Never destroyed: used from static init.
  return *registry;
}
}  // namespace

bool RegisterObjectValidator(std::string_view kind, ObjectValidator validator) {
  Registry& registry = Validators();
  absl::MutexLock lock(&registry.mu);
  registry.validators[std::string(kind)] = validator;
  return true;
}

absl::StatusOr<std::vector<kube::StatusCause>> ValidateObject(const kube::Json& object) {
  std::string kind = kube::StringAt(object, "kind");
  if (kind == kinds::kDataset) return ParseAndValidate<Dataset>(object);
  if (kind == kinds::kModel) return ParseAndValidate<Model>(object);
  if (kind == kinds::kJointInferenceService) return ParseAndValidate<JointInferenceService>(object);
  if (kind == kinds::kFederatedLearningJob) return ParseAndValidate<FederatedLearningJob>(object);
  if (kind == kinds::kIncrementalLearningJob) {
    return ParseAndValidate<IncrementalLearningJob>(object);
  }
  if (kind == kinds::kLifelongLearningJob) return ParseAndValidate<LifelongLearningJob>(object);
  if (kind == kinds::kFeatureExtractionService) {
    return ParseAndValidate<FeatureExtractionService>(object);
  }
  if (kind == kinds::kObjectSearchService) return ParseAndValidate<ObjectSearchService>(object);
  if (kind == kinds::kObjectTrackingService) return ParseAndValidate<ObjectTrackingService>(object);
  if (kind == kinds::kVideoAnalyticsJob) return ParseAndValidate<VideoAnalyticsJob>(object);
  if (kind == kinds::kReidJob) return ParseAndValidate<ReidJob>(object);
  ObjectValidator other = nullptr;
  {
    Registry& registry = Validators();
    absl::MutexLock lock(&registry.mu);
    if (auto it = registry.validators.find(kind); it != registry.validators.end()) {
      other = it->second;
    }
  }
  if (other != nullptr) return other(object);
  return absl::UnimplementedError(absl::StrCat("not a sedna.io kind Nereid knows: \"", kind, "\""));
}

}  // namespace nereid::api
