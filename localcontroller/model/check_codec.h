#pragma once

// A model Check as a compact JSON string, so the LC can persist the last reported verification
// (and the fingerprint it was computed over) and, after a restart, neither re-hash an unchanged
// model nor report it again. Unknown keys are ignored; a different "v" fails to parse (the caller
// then simply checks again).

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "localcontroller/model/model_verifier.h"

namespace nereid::lc::model {

std::string SerializeCheck(const Check& check);
// InvalidArgument for text that is not a Check of this version.
absl::StatusOr<Check> ParseCheck(std::string_view text);

}  // namespace nereid::lc::model
