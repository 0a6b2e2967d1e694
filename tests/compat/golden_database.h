#pragma once

// The golden LC database of a release: written by write_goldens through the LC's own database
// code, checked by lc_database_compat_test.

#include <string>

#include "absl/status/status.h"
#include "localcontroller/dataset/checkpoint.h"

namespace nereid::compat {

inline constexpr char kGoldenDatabase[] = "lc.sqlite";

// The checkpoint of the golden dataset's file: a txt file counted to its end.
lc::dataset::Checkpoint GoldenCheckpoint();

// Writes release 0.1.0's golden database to `path` (which must not exist).
absl::Status WriteGoldenDatabase(const std::string& path);

}  // namespace nereid::compat
