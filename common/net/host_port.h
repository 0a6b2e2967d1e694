#pragma once

// HOST:PORT, the form of every listen address of the GM and the LC: "127.0.0.1:9100",
// "localhost:9100", "[::1]:9100" (IPv6 in brackets); port 0..65535, 0 picks a free port.

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace nereid::net {

// The host of a listen address that names none (the LC's ":9100").
inline constexpr std::string_view kAllInterfaces = "0.0.0.0";

struct HostPort {
  std::string host;  // without brackets
  int port = 0;
  // Back to HOST:PORT (brackets around an IPv6 host).
  std::string ToString() const;
};

// InvalidArgument saying what is wrong (no port, port out of range, IPv6 without brackets). An
// empty host (":9100") is refused, unless `empty_host` is given: it stands for it then (the LC's
// ":9100" means all interfaces, kAllInterfaces).
absl::StatusOr<HostPort> ParseHostPort(std::string_view text, std::string_view empty_host = "");

}  // namespace nereid::net
