#include "localcontroller/server/listen_address.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/strings/absl_compat.h"

namespace nereid::lc::server {

std::string ListenAddress::ToString() const {
  return host.find(':') != std::string::npos ? absl::StrCat("[", host, "]:", port)
                                             : absl::StrCat(host, ":", port);
}

absl::StatusOr<ListenAddress> ParseListenAddress(std::string_view text) {
  ListenAddress address;
  std::string_view port_text;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return absl::InvalidArgumentError(
          absl::StrCat("listen address \"", ToAbsl(text), "\" is not [IPv6]:PORT"));
    }
    address.host = std::string(text.substr(1, close - 1));
    port_text = text.substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("listen address \"", ToAbsl(text), "\" has no port (want HOST:PORT)"));
    }
    if (text.find(':') != colon) {
      return absl::InvalidArgumentError(absl::StrCat(
          "listen address \"", ToAbsl(text), "\": write IPv6 addresses as [ADDRESS]:PORT"));
    }
    address.host = std::string(text.substr(0, colon));
    port_text = text.substr(colon + 1);
  }
  if (address.host.empty()) address.host = "0.0.0.0";
  int port = -1;
  if (port_text.empty() || !absl::SimpleAtoi(ToAbsl(port_text), &port) || port < 0 ||
      port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("listen address \"", ToAbsl(text),
                                                   "\": port must be a number 0..65535"));
  }
  address.port = port;
  return address;
}

}  // namespace nereid::lc::server
