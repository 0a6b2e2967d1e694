#pragma once

// What the LC refuses to apply (NACKed to the GM with the reason): structurally broken changes and
// specs it can never act on. Conservative on purpose: anything a Sedna manifest may legitimately
// hold passes (an unknown dataset format is not refused here: it is counted and reported as an
// error in the Dataset's status, where its author sees it).

#include <string_view>

#include "absl/status/status.h"
#include "localcontroller/cloudlink/desired_state_store.h"
#include "nereid/edge/v1/resources.pb.h"
#include "nereid/edge/v1/sync.pb.h"

namespace nereid::lc {

// InvalidArgument with a message naming the object and the field.
absl::Status ValidateForNode(const edge::v1::Resource& resource, std::string_view node);

// Everything the LC does with one change from the GM before answering it: validates it for `node`
// and applies it to `store`. OK is ACKed; InvalidArgument / FailedPrecondition are NACKed with the
// reason; anything else is a local failure (see DesiredStateStore).
absl::Status ApplyChange(const edge::v1::Change& change, std::string_view node,
                         DesiredStateStore& store);

}  // namespace nereid::lc
