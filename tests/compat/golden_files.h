#pragma once

// Where the compat goldens live and how a message is written to and read from one.

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "google/protobuf/message_lite.h"

namespace nereid::compat {

// <dir>/<name>.binpb
std::string GoldenPath(const std::string& dir, const std::string& name);

// The deterministic binary encoding (map entries sorted), as every golden is written.
std::string Encode(const google::protobuf::MessageLite& message);

absl::Status WriteFile(const std::string& path, const std::string& bytes);
absl::StatusOr<std::string> ReadFile(const std::string& path);

}  // namespace nereid::compat
