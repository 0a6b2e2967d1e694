#pragma once

// What the status of a multi-edge inference service (FeatureExtractionService,
// ObjectSearchService, ObjectTrackingService) says, computed from its children as the informer
// cache shows them. Sedna marks these services Failed from the *type* of a Deployment's last
// condition (so every FeatureExtractionService fails on its second sync) and never lets them
// recover; here every worker is judged from its real state on every reconcile:
//
//   Deployment  available / failed as AssessDeployment (joint_inference_status.h): available
//               replicas, ProgressDeadlineExceeded, ReplicaFailure — a rollout in progress is not
//               a failure.
//   Pod         running: phase Running; failed: phase Failed, or a container stuck waiting in
//               CrashLoopBackOff, ErrImagePull, ImagePullBackOff, CreateContainerConfigError,
//               CreateContainerError or InvalidImageName; Succeeded means it exited (the
//               controller replaces it) and counts as neither.
//
// Phase: Running when every worker is available/running, Failed when one failed, Pending
// otherwise (being created, rolling out, scheduled, scaled to 0). It is recomputed every time, so
// a Failed service goes back to Running when its workers recover. active = workers available or
// running, failed = workers failed.

#include <cstdint>
#include <string>
#include <vector>

#include "common/kube/object.h"
#include "globalmanager/controllers/joint_inference_status.h"

namespace nereid::gm {

WorkerHealth AssessPod(const kube::Json* pod);

// One worker of a service: a Deployment or a pod, by the name the user sees in the message.
struct NamedWorker {
  std::string what;  // "Deployment x", "tracking pod 1"
  WorkerHealth health;
};

using ServiceState = ServicePhaseState;

ServiceState ComputeServiceState(const std::vector<NamedWorker>& workers);

}  // namespace nereid::gm
