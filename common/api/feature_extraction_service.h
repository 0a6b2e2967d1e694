#pragma once

// FeatureExtractionService (sedna.io/v1alpha1, short name fe): the feature-extraction stage of
// the multi-edge pedestrian-tracking pipeline (it consumes the detector's objects and serves
// re-identification features). Sedna's spec is {kafkaSupport, model, <inline DeploymentSpec>}; the
// GM runs it as Deployment "<name>-deployment-fe" behind Service "<name>-fe" on port 6000.

#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/common_types.h"
#include "common/api/multi_edge_common.h"
#include "common/kube/errors.h"
#include "common/kube/object.h"

namespace nereid::api {

struct FeatureExtractionServiceSpec {
  std::optional<bool> kafka_support;  // JSON "kafkaSupport": KAFKA_ENABLED=true for the workers.
  NamedRef model;                     // Required: a Model in the same namespace.
  InlineDeploymentSpec deployment;    // replicas, template, selector, ... inline.

  kube::Json ToJson() const;
  friend bool operator==(const FeatureExtractionServiceSpec&,
                         const FeatureExtractionServiceSpec&) = default;
};

struct FeatureExtractionService {
  ObjectMeta metadata;
  FeatureExtractionServiceSpec spec;
  ServiceStatus status;  // metrics: from the workers' reports.

  // See Dataset::FromJson for the error contract.
  static absl::StatusOr<FeatureExtractionService> FromJson(const kube::Json& object);
  kube::Json ToJson() const;
  kube::Json StatusToJson() const { return status.ToJson(); }
  std::vector<kube::StatusCause> Validate() const;
};

}  // namespace nereid::api
