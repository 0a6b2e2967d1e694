#pragma once

// JointInferenceService (sedna.io/v1alpha1, short name ji): a little model on an edge node that
// answers easy inputs itself and sends hard examples to a big model in the cloud. The GM runs each
// worker as a Deployment (cloud one behind a Service on port 5000), optionally with an HPA.

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

// Sedna's HPA block (autoscaling/v2 shape): the GM creates "hpa-<deployment>" from it.
struct Hpa {
  std::optional<int32_t> min_replicas;  // >= 1 when set.
  int32_t max_replicas = 0;             // Required, >= 1 and >= minReplicas.
  kube::Json metrics;   // autoscaling/v2 MetricSpec list, kept as written; null if none.
  kube::Json behavior;  // autoscaling/v2 HorizontalPodAutoscalerBehavior; null if none.

  kube::Json ToJson() const;
  friend bool operator==(const Hpa&, const Hpa&) = default;
};

struct JointInferenceEdgeWorker {
  NamedRef model;                         // The little model.
  HardExampleMining hard_example_mining;  // JSON "hardExampleMining".
  PodTemplate pod_template;               // JSON "template".
  std::optional<Hpa> hpa;
  // JSON "replicas" (Nereid, additive, optional): Deployment replicas when there is no HPA;
  // absent means 1. 0 scales the worker down without deleting the service.
  std::optional<int32_t> replicas;

  kube::Json ToJson() const;
  friend bool operator==(const JointInferenceEdgeWorker&,
                         const JointInferenceEdgeWorker&) = default;
};

struct JointInferenceCloudWorker {
  NamedRef model;  // The big model.
  PodTemplate pod_template;
  std::optional<Hpa> hpa;
  std::optional<int32_t> replicas;  // As for the edge worker.

  kube::Json ToJson() const;
  friend bool operator==(const JointInferenceCloudWorker&,
                         const JointInferenceCloudWorker&) = default;
};

struct JointInferenceServiceSpec {
  JointInferenceEdgeWorker edge_worker;    // JSON "edgeWorker".
  JointInferenceCloudWorker cloud_worker;  // JSON "cloudWorker".

  kube::Json ToJson() const;
  friend bool operator==(const JointInferenceServiceSpec&,
                         const JointInferenceServiceSpec&) = default;
};

namespace ji_phases {
inline constexpr std::string_view kPending = "Pending";  // Workers created, not all available.
inline constexpr std::string_view kRunning = "Running";  // Both workers available.
inline constexpr std::string_view kFailed = "Failed";  // A worker failed (not a transient rollout).
}  // namespace ji_phases

// conditions (types Pending|Running|Failed), startTime, active, failed, metrics are Sedna's.
// Nereid adds `phase` (the current condition type, a bounded summary for `kubectl get ji`) and
// observedGeneration.
struct JointInferenceServiceStatus {
  std::string phase;
  std::vector<Condition> conditions;
  std::optional<absl::Time> start_time;
  int32_t active = 0;           // Workers (Deployments) available.
  int32_t failed = 0;           // Workers failed.
  std::vector<Metric> metrics;  // From the edge worker's reports (inferenceNumber, ...).
  std::optional<int64_t> observed_generation;

  kube::Json ToJson() const;
  friend bool operator==(const JointInferenceServiceStatus&,
                         const JointInferenceServiceStatus&) = default;
};

// object["status"] of a JointInferenceService or of a kind with the same status shape (the
// multi-edge inference services); type errors go to `reader`.
JointInferenceServiceStatus ReadServiceStatus(const kube::Json& object, FieldReader* reader);

struct JointInferenceService {
  ObjectMeta metadata;
  JointInferenceServiceSpec spec;
  JointInferenceServiceStatus status;

  // See Dataset::FromJson for the error contract.
  static absl::StatusOr<JointInferenceService> FromJson(const kube::Json& object);
  kube::Json ToJson() const;
  kube::Json StatusToJson() const { return status.ToJson(); }
  std::vector<kube::StatusCause> Validate() const;
};

}  // namespace nereid::api
