#pragma once

// ReidJob (sedna.io/v1alpha1, short name reid): one offline re-identification worker pod that reads
// the detections a VideoAnalyticsJob left on shared storage; Nereid also gives it the Service
// "<name>-reid" on port 5000 that Sedna's ReID workers expect (Sedna never creates it). The spec
// is Sedna's: the inline batch/v1 JobSpec (inference_job.h) and kafkaSupport; no model.

#include <optional>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/common_types.h"
#include "common/api/inference_job.h"
#include "common/kube/errors.h"
#include "common/kube/object.h"

namespace nereid::api {

struct ReidJobSpec {
  InlineJobSpec job;
  std::optional<bool> kafka_support;  // JSON "kafkaSupport": true sets KAFKA_ENABLED=true.

  kube::Json ToJson() const;
  friend bool operator==(const ReidJobSpec&, const ReidJobSpec&) = default;
};

struct ReidJob {
  ObjectMeta metadata;
  ReidJobSpec spec;
  InferenceJobStatus status;

  // See Dataset::FromJson for the error contract.
  static absl::StatusOr<ReidJob> FromJson(const kube::Json& object);
  kube::Json ToJson() const;
  kube::Json StatusToJson() const { return status.ToJson(); }
  std::vector<kube::StatusCause> Validate() const;
};

}  // namespace nereid::api
