#pragma once

// What the multi-edge inference service kinds (FeatureExtractionService, ObjectSearchService,
// ObjectTrackingService) share: Sedna embeds an apps/v1 DeploymentSpec inline in their specs
// (FeatureExtractionService's spec itself, reidWorkers of the object kinds), lists template-only
// workers (userWorker, trackingWorkers[]), and gives them JointInferenceService's status shape
// (Sedna's Pending|Running|Failed conditions, startTime, active, failed, metrics; Nereid's phase
// and observedGeneration).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/api/common_types.h"
#include "common/api/joint_inference_service.h"
#include "common/api/validation.h"
#include "common/kube/object.h"

namespace nereid::api {

using ServiceStatus = JointInferenceServiceStatus;
namespace service_phases = ji_phases;

// An apps/v1 DeploymentSpec written inline. `replicas` (absent: 1 — Sedna dereferences the
// missing pointer and crashes) and `template` are typed; the other DeploymentSpec fields Sedna
// accepts (selector, strategy, minReadySeconds, revisionHistoryLimit, progressDeadlineSeconds,
// paused) are kept as written in `extra`, so a manifest round-trips unchanged. The controllers own
// the Deployment's selector (their labels); they pass strategy, minReadySeconds,
// revisionHistoryLimit, progressDeadlineSeconds and paused through (Sedna drops them).
struct InlineDeploymentSpec {
  std::optional<int32_t> replicas;
  PodTemplate pod_template;  // JSON "template".
  kube::Json extra = kube::Json::object();

  int32_t Replicas() const { return replicas.value_or(1); }
  // Writes the fields into `json` (an object: the containing spec).
  void PutInto(kube::Json* json) const;
  friend bool operator==(const InlineDeploymentSpec&, const InlineDeploymentSpec&) = default;
};

// The DeploymentSpec keys kept in InlineDeploymentSpec::extra.
const std::vector<std::string_view>& InlineDeploymentExtraKeys();

// Reads the inline DeploymentSpec fields of `obj` (located at `path`).
InlineDeploymentSpec ReadInlineDeployment(const kube::Json& obj, std::string_view path,
                                          FieldReader* reader);
// replicas >= 0; the template (ValidatePodTemplate); selector, when given, a LabelSelector whose
// matchLabels the template's labels carry (as the API server checks for a Deployment).
void ValidateInlineDeployment(const InlineDeploymentSpec& spec, std::string_view path,
                              std::string_view worker, Causes* out);

// {"template": PodTemplateSpec}: userWorker, trackingWorkers[].
struct TemplateWorker {
  PodTemplate pod_template;

  kube::Json ToJson() const;
  friend bool operator==(const TemplateWorker&, const TemplateWorker&) = default;
};

TemplateWorker ReadTemplateWorker(const kube::Json& obj, std::string_view path,
                                  FieldReader* reader);
// obj[key] as a list of TemplateWorker.
std::vector<TemplateWorker> ReadTemplateWorkers(const kube::Json& obj, std::string_view key,
                                                std::string_view parent, FieldReader* reader);
// At least one entry, each with a valid template.
void ValidateTemplateWorkers(const std::vector<TemplateWorker>& workers, std::string_view field,
                             std::string_view worker, Causes* out);

}  // namespace nereid::api
