#pragma once

// ObjectTrackingService (sedna.io/v1alpha1, short name objt): follow objects across cameras. One
// tracking pod per trackingWorkers[] entry and reid workers (Deployment
// "<name>-deployment-reidworker" with the inline DeploymentSpec, Service "<name>-reidworker" on
// 9378, reached through EDGEMESH_URL). Sedna defines the kind but runs no controller for it.

#include <vector>

#include "absl/status/statusor.h"
#include "common/api/common_types.h"
#include "common/api/multi_edge_common.h"
#include "common/kube/errors.h"
#include "common/kube/object.h"

namespace nereid::api {

struct ObjectTrackingServiceSpec {
  std::vector<TemplateWorker> tracking_workers;  // JSON "trackingWorkers".
  InlineDeploymentSpec reid_workers;             // JSON "reidWorkers".

  kube::Json ToJson() const;
  friend bool operator==(const ObjectTrackingServiceSpec&,
                         const ObjectTrackingServiceSpec&) = default;
};

struct ObjectTrackingService {
  ObjectMeta metadata;
  ObjectTrackingServiceSpec spec;
  ServiceStatus status;

  // See Dataset::FromJson for the error contract.
  static absl::StatusOr<ObjectTrackingService> FromJson(const kube::Json& object);
  kube::Json ToJson() const;
  kube::Json StatusToJson() const { return status.ToJson(); }
  std::vector<kube::StatusCause> Validate() const;
};

}  // namespace nereid::api
