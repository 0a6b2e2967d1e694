#pragma once

// RecordEvent: the one way a GM controller records an Event about its object. Nothing happens
// when the context has no recorder (unit tests may leave it out). The involved object's kind and
// apiVersion come from `resource` when the object lacks them (a cached object may have lost its
// TypeMeta), so `kubectl describe` always finds the Event.
//
// Reasons are constants: the kind's own in its header (dataset_reasons, model_reasons, ...),
// those about children (pods, Services) in common/job/event_reasons.h, shared with the job
// library.

#include <string_view>

#include "common/kube/event_recorder.h"
#include "common/kube/object.h"
#include "common/kube/resource.h"
#include "globalmanager/controllers/controller_context.h"

namespace nereid::gm {

void RecordEvent(const ControllerContext& context, const kube::Resource& resource,
                 const kube::Json& object, kube::EventType type, std::string_view reason,
                 std::string_view message);

}  // namespace nereid::gm
