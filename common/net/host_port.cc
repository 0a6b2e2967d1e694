#include "common/net/host_port.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/strings/absl_compat.h"

namespace nereid::net {

std::string HostPort::ToString() const {
  return host.find(':') != std::string::npos ? absl::StrCat("[", host, "]:", port)
                                             : absl::StrCat(host, ":", port);
}

absl::StatusOr<HostPort> ParseHostPort(std::string_view text, std::string_view empty_host) {
  HostPort address;
  std::string_view port_text;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return absl::InvalidArgumentError(
          absl::StrCat("\"", ToAbsl(text), "\" is not [IPv6]:PORT"));
    }
    address.host = std::string(text.substr(1, close - 1));
    port_text = text.substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"", ToAbsl(text), "\" has no port (want HOST:PORT)"));
    }
    if (text.find(':') != colon) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"", ToAbsl(text), "\": write IPv6 addresses as [addr]:port"));
    }
    address.host = std::string(text.substr(0, colon));
    port_text = text.substr(colon + 1);
  }
  // A bracket inside the host would print as something that does not read back.
  if (address.host.find_first_of("[]") != std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", ToAbsl(text), "\": brackets only around an IPv6 address"));
  }
  if (address.host.empty()) {
    if (empty_host.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"", ToAbsl(text), "\" has no host (want HOST:PORT)"));
    }
    address.host = std::string(empty_host);
  }
  int port = -1;
  if (port_text.empty() || !absl::SimpleAtoi(ToAbsl(port_text), &port) || port < 0 ||
      port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", ToAbsl(text), "\": the port must be a number in 0-65535"));
  }
  address.port = port;
  return address;
}

}  // namespace nereid::net
