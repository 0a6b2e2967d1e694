#pragma once

// VideoAnalyticsJob (sedna.io/v1alpha1, short name va): one detection worker pod that reads a video
// stream with a Model, behind the Service "<name>-videoanalytics" on port 4000; the first stage of
// Sedna's pedestrian-tracking pipeline. The spec is Sedna's: the inline batch/v1 JobSpec
// (inference_job.h), kafkaSupport and model.

#include <optional>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/common_types.h"
#include "common/api/inference_job.h"
#include "common/kube/errors.h"
#include "common/kube/object.h"

namespace nereid::api {

struct VideoAnalyticsJobSpec {
  InlineJobSpec job;           // The inline JobSpec fields.
  std::optional<bool> kafka_support;  // JSON "kafkaSupport": true sets KAFKA_ENABLED=true.
  NamedRef model;              // The detection Model (required).

  kube::Json ToJson() const;
  friend bool operator==(const VideoAnalyticsJobSpec&, const VideoAnalyticsJobSpec&) = default;
};

struct VideoAnalyticsJob {
  ObjectMeta metadata;
  VideoAnalyticsJobSpec spec;
  InferenceJobStatus status;

  // See Dataset::FromJson for the error contract.
  static absl::StatusOr<VideoAnalyticsJob> FromJson(const kube::Json& object);
  kube::Json ToJson() const;
  kube::Json StatusToJson() const { return status.ToJson(); }
  std::vector<kube::StatusCause> Validate() const;
};

}  // namespace nereid::api
