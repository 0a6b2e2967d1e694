#pragma once

// Informer handler for a job kind's children (pods, Services): observes the job's expectations
// and enqueues the owning job, for children whose controller ownerReference is of `owner_kind`.
// Adds are observed on add, deletions when the child is gone or starts being deleted
// (deletionTimestamp), as kube-controller-manager does. Replaces Controller::EnqueueOwnerHandler
// for job controllers.

#include <string>

#include "common/job/expectations.h"
#include "common/kube/controller.h"
#include "common/kube/event_handler.h"

namespace nereid::job {

kube::ResourceEventHandlerFuncs ObservingOwnerHandler(kube::Controller* controller,
                                                      std::string owner_kind,
                                                      Expectations* expectations);

}  // namespace nereid::job
