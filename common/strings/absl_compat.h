#pragma once

// Debian's Abseil is built with ABSL_OPTION_USE_STD_STRING_VIEW=0, so absl::string_view is its own
// type and does not convert from std::string_view. Nereid's interfaces take std::string_view; these
// adapters are for the call sites that hand one to Abseil (StrCat, StrSplit, Status, Cord, ...).

#include <string_view>

#include "absl/strings/string_view.h"

namespace nereid {

inline absl::string_view ToAbsl(std::string_view s) { return absl::string_view(s.data(), s.size()); }
inline std::string_view ToStd(absl::string_view s) { return std::string_view(s.data(), s.size()); }

}  // namespace nereid
