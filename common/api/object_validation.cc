#include "common/api/object_validation.h"

#include "absl/strings/str_cat.h"
#include "common/api/dataset.h"
#include "common/api/federated_learning_job.h"
#include "common/api/incremental_learning_job.h"
#include "common/api/joint_inference_service.h"
#include "common/api/lifelong_learning_job.h"
#include "common/api/model.h"
#include "common/api/sedna_contract.h"

namespace nereid::api {

namespace {
template <typename Kind>
absl::StatusOr<std::vector<kube::StatusCause>> ParseAndValidate(const kube::Json& object) {
  absl::StatusOr<Kind> parsed = Kind::FromJson(object);
  if (!parsed.ok()) return parsed.status();
  return parsed->Validate();
}
}  // namespace

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
  return absl::UnimplementedError(absl::StrCat("not a sedna.io kind Nereid knows: \"", kind, "\""));
}

}  // namespace nereid::api
