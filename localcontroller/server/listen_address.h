#pragma once

// host:port for the LC's REST listener: "127.0.0.1:9100", "0.0.0.0:9100", "[::1]:9100",
// "localhost:9100"; ":9100" means all interfaces (0.0.0.0); port 0 picks a free port.

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace nereid::lc::server {

struct ListenAddress {
  std::string host;  // without brackets
  int port = 0;
  std::string ToString() const;
};

// InvalidArgument with what is wrong ("missing port", "port 70000 out of range", ...).
absl::StatusOr<ListenAddress> ParseListenAddress(std::string_view text);

}  // namespace nereid::lc::server
