#pragma once

// What the LC refuses to apply (NACKed to the GM with the reason): structurally broken changes and
// specs it can never act on. Conservative on purpose: anything a Sedna manifest may legitimately
// hold passes (an unknown dataset format is not refused here: it is counted and reported as an
// error in the Dataset's status, as the issue asks).

#include <string_view>

#include "absl/status/status.h"
#include "nereid/edge/v1/resources.pb.h"

namespace nereid::lc {

// InvalidArgument with a message naming the object and the field.
absl::Status ValidateForNode(const edge::v1::Resource& resource, std::string_view node);

}  // namespace nereid::lc
