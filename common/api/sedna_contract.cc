#include "common/api/sedna_contract.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/strings/absl_compat.h"

namespace nereid::api {

namespace resources {
namespace {
kube::Resource Make(std::string resource, std::string_view kind) {
  return kube::Resource{std::string(kGroup), std::string(kVersion), std::move(resource),
                        std::string(kind), /*namespaced=*/true};
}
}  // namespace

const kube::Resource& Datasets() {
  static const kube::Resource r = Make("datasets", kinds::kDataset);
  return r;
}
const kube::Resource& Models() {
  static const kube::Resource r = Make("models", kinds::kModel);
  return r;
}
const kube::Resource& JointInferenceServices() {
  static const kube::Resource r = Make("jointinferenceservices", kinds::kJointInferenceService);
  return r;
}
const kube::Resource& FederatedLearningJobs() {
  static const kube::Resource r = Make("federatedlearningjobs", kinds::kFederatedLearningJob);
  return r;
}
const kube::Resource& IncrementalLearningJobs() {
  static const kube::Resource r = Make("incrementallearningjobs", kinds::kIncrementalLearningJob);
  return r;
}
const kube::Resource& LifelongLearningJobs() {
  static const kube::Resource r = Make("lifelonglearningjobs", kinds::kLifelongLearningJob);
  return r;
}

const kube::Resource& FeatureExtractionServices() {
  static const kube::Resource r =
      Make("featureextractionservices", kinds::kFeatureExtractionService);
  return r;
}
const kube::Resource& VideoAnalyticsJobs() {
  static const kube::Resource r = Make("videoanalyticsjobs", kinds::kVideoAnalyticsJob);
  return r;
}
const kube::Resource& ReidJobs() {
  static const kube::Resource r = Make("reidjobs", kinds::kReidJob);
  return r;
}
const kube::Resource& ObjectSearchServices() {
  static const kube::Resource r = Make("objectsearchservices", kinds::kObjectSearchService);
  return r;
}
const kube::Resource& ObjectTrackingServices() {
  static const kube::Resource r = Make("objecttrackingservices", kinds::kObjectTrackingService);
  return r;
}

const std::vector<const kube::Resource*>& All() {
  static const std::vector<const kube::Resource*> all = {
      &Datasets(),
      &Models(),
      &JointInferenceServices(),
      &FederatedLearningJobs(),
      &IncrementalLearningJobs(),
      &LifelongLearningJobs(),
      &FeatureExtractionServices(),
      &ObjectSearchServices(),
      &ObjectTrackingServices(),
      &VideoAnalyticsJobs(),
      &ReidJobs(),
  };
  return all;
}

const kube::Resource* ForKind(std::string_view kind) {
  for (const kube::Resource* r : All()) {
    if (r->kind == kind) return r;
  }
  return nullptr;
}
}  // namespace resources

std::string LowerKind(std::string_view kind) { return absl::AsciiStrToLower(ToAbsl(kind)); }

std::string LabelKeyName(std::string_view kind) {
  return absl::StrCat(LowerKind(kind), ".sedna.io/name");
}
std::string LabelKeyUid(std::string_view kind) {
  return absl::StrCat(LowerKind(kind), ".sedna.io/uid");
}
std::string LabelKeyWorkerType(std::string_view kind) {
  return absl::StrCat(LowerKind(kind), ".sedna.io/worker-type");
}

std::map<std::string, std::string> SelectorLabels(std::string_view kind, std::string_view name,
                                                  std::string_view uid) {
  return {{LabelKeyName(kind), std::string(name)}, {LabelKeyUid(kind), std::string(uid)}};
}

std::map<std::string, std::string> WorkerLabels(std::string_view kind, std::string_view name,
                                                std::string_view uid,
                                                std::string_view worker_type) {
  std::map<std::string, std::string> labels = SelectorLabels(kind, name, uid);
  labels.emplace(LabelKeyWorkerType(kind), absl::AsciiStrToLower(ToAbsl(worker_type)));
  return labels;
}

std::string AppLabelValue(std::string_view name, std::string_view worker_type) {
  return absl::StrCat(ToAbsl(name), "-", absl::AsciiStrToLower(ToAbsl(worker_type)), "-svc");
}

std::string DeploymentName(std::string_view name, std::string_view worker_type) {
  return absl::StrCat(ToAbsl(name), "-deployment-", absl::AsciiStrToLower(ToAbsl(worker_type)));
}

std::string ServiceName(std::string_view name, std::string_view worker_type) {
  return absl::StrCat(ToAbsl(name), "-", absl::AsciiStrToLower(ToAbsl(worker_type)));
}

std::string PodGenerateName(std::string_view name, std::string_view worker_type) {
  return absl::StrCat(ToAbsl(name), "-", absl::AsciiStrToLower(ToAbsl(worker_type)), "-");
}

std::string HpaName(std::string_view deployment_name) {
  return absl::StrCat("hpa-", ToAbsl(deployment_name));
}

std::string StageNodeAnnotation(std::string_view stage) {
  return absl::StrCat(ToAbsl(annotations::kPrefix), ToAbsl(stage));
}

}  // namespace nereid::api
