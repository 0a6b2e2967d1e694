#pragma once

// ObjectSearchService (sedna.io/v1alpha1, short name objs): search for a person across cameras.
// A user worker (Deployment "<name>-deployment-userworker", 1 replica, Service "<name>-userworker"
// on 9379) takes the query; reid workers (Deployment "<name>-deployment-reidworker" with the
// inline DeploymentSpec, Service "<name>-reidworker" on 9378) match features; one tracking pod per
// trackingWorkers[] entry follows the cameras and reaches the others through USERWORKER_URL and
// EDGEMESH_URL.

#include <vector>

#include "absl/status/statusor.h"
#include "common/api/common_types.h"
#include "common/api/multi_edge_common.h"
#include "common/kube/errors.h"
#include "common/kube/object.h"

namespace nereid::api {

struct ObjectSearchServiceSpec {
  TemplateWorker user_worker;                    // JSON "userWorker".
  std::vector<TemplateWorker> tracking_workers;  // JSON "trackingWorkers".
  InlineDeploymentSpec reid_workers;             // JSON "reidWorkers".

  kube::Json ToJson() const;
  friend bool operator==(const ObjectSearchServiceSpec&, const ObjectSearchServiceSpec&) = default;
};

struct ObjectSearchService {
  ObjectMeta metadata;
  ObjectSearchServiceSpec spec;
  ServiceStatus status;

  // See Dataset::FromJson for the error contract.
  static absl::StatusOr<ObjectSearchService> FromJson(const kube::Json& object);
  kube::Json ToJson() const;
  kube::Json StatusToJson() const { return status.ToJson(); }
  std::vector<kube::StatusCause> Validate() const;
};

}  // namespace nereid::api
