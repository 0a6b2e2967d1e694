#pragma once

// FederatedLearningJob (sedna.io/v1alpha1, short name fl): training workers on edge nodes train on
// their local Dataset and exchange weights through one aggregation worker (usually in the cloud,
// behind the Service "<name>-aggregation" on port 7363).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/api/common_types.h"
#include "common/kube/errors.h"
#include "common/kube/object.h"

namespace nereid::api {

struct AggregationWorker {
  NamedRef model;  // Where the aggregated model goes; its status.metrics get the workers' reports.
  PodTemplate pod_template;  // JSON "template".

  kube::Json ToJson() const;
  friend bool operator==(const AggregationWorker&, const AggregationWorker&) = default;
};

struct TrainingWorker {
  NamedRef dataset;  // The Dataset on this worker's node.
  PodTemplate pod_template;

  kube::Json ToJson() const;
  friend bool operator==(const TrainingWorker&, const TrainingWorker&) = default;
};

// How workers exchange aggregation data: over the aggregation worker's websocket (ws, Sedna's
// default when no transmitter is given) or through an S3 bucket.
struct S3Transmitter {
  std::string agg_data_path;    // JSON "aggDataPath", an s3:// URL.
  std::string credential_name;  // JSON "credentialName": Secret with S3 credentials.

  friend bool operator==(const S3Transmitter&, const S3Transmitter&) = default;
};
struct Transmitter {
  bool ws = false;  // JSON "ws": {} present.
  std::optional<S3Transmitter> s3;

  // "s3" when s3 is set, else "ws" (the TRANSMITTER env value).
  std::string_view Name() const { return s3.has_value() ? "s3" : "ws"; }
  kube::Json ToJson() const;
  friend bool operator==(const Transmitter&, const Transmitter&) = default;
};

struct FederatedLearningJobSpec {
  AggregationWorker aggregation_worker;          // JSON "aggregationWorker".
  std::vector<TrainingWorker> training_workers;  // JSON "trainingWorkers".
  std::optional<NamedRef> pretrained_model;      // JSON "pretrainedModel".
  std::optional<Transmitter> transmitter;

  kube::Json ToJson() const;
  friend bool operator==(const FederatedLearningJobSpec&,
                         const FederatedLearningJobSpec&) = default;
};

namespace fl_phases {
inline constexpr std::string_view kPending = "Pending";
inline constexpr std::string_view kRunning = "Running";
inline constexpr std::string_view kSucceeded = "Succeeded";
inline constexpr std::string_view kFailed = "Failed";
}  // namespace fl_phases

// Sedna's fields: conditions (Training|Complete|Failed), phase (Pending|Running|Succeeded|Failed),
// startTime, completionTime, active/succeeded/failed pod counts. Nereid adds currentRound (the
// latest training round the workers reported: a bounded replacement for Sedna's one-condition-per-
// round list) and observedGeneration.
struct FederatedLearningJobStatus {
  std::string phase;
  std::vector<Condition> conditions;
  std::optional<absl::Time> start_time;
  std::optional<absl::Time> completion_time;
  int32_t active = 0;
  int32_t succeeded = 0;
  int32_t failed = 0;
  std::optional<int64_t> current_round;  // JSON "currentRound".
  std::optional<int64_t> observed_generation;

  kube::Json ToJson() const;
  friend bool operator==(const FederatedLearningJobStatus&,
                         const FederatedLearningJobStatus&) = default;
};

struct FederatedLearningJob {
  ObjectMeta metadata;
  FederatedLearningJobSpec spec;
  FederatedLearningJobStatus status;

  // See Dataset::FromJson for the error contract.
  static absl::StatusOr<FederatedLearningJob> FromJson(const kube::Json& object);
  kube::Json ToJson() const;
  kube::Json StatusToJson() const { return status.ToJson(); }
  std::vector<kube::StatusCause> Validate() const;
};

}  // namespace nereid::api
