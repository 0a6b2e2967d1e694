#pragma once

// HTTP/2 keepalive for the long-lived GM <-> LC stream, so a dead link (NAT drop, powered-off node,
// half-open TCP) is noticed within time + timeout (default 30 s + 10 s = 40 s) on both sides
// instead of after the kernel's TCP timeouts. Server and client must agree: the server has to
// permit pings at least as often as the client sends them, or it answers with GOAWAY
// "too_many_pings" (gRFC A8).

#include "absl/time/time.h"
#include "grpcpp/server_builder.h"
#include "grpcpp/support/channel_arguments.h"

namespace nereid::net {

struct KeepaliveOptions {
  // Ping after this long without activity.
  absl::Duration time = absl::Seconds(30);
  // Declare the link dead when a ping is not answered within this.
  absl::Duration timeout = absl::Seconds(10);
  // Server side: minimum interval between client pings it accepts (must be <= the client's time).
  absl::Duration min_client_ping_interval = absl::Seconds(10);
};

void ApplyServerKeepalive(const KeepaliveOptions& options, grpc::ServerBuilder& builder);
void ApplyClientKeepalive(const KeepaliveOptions& options, grpc::ChannelArguments& args);

}  // namespace nereid::net
