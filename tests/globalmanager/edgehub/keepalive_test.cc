// A dead link (the peer stops answering, the connection stays open) must be noticed by keepalive
// pings, not by the kernel's TCP timeouts. Production uses 30 s + 10 s (<= 40 s); here the same
// settings scaled down to seconds.

#include <catch2/catch.hpp>
#include <memory>

#include "globalmanager/edgehub/edge_hub.h"
#include "globalmanager/edgehub/server.h"
#include "tests/common/net/tcp_proxy.h"
#include "tests/common/net/test_certs.h"
#include "tests/fakes/eventually.h"
#include "tests/globalmanager/edgehub/test_node.h"

namespace nereid::gm {
namespace {

TEST_CASE("the hub notices a dead link through keepalive pings", "[edgehub][keepalive]") {
  EdgeHub hub(EdgeHub::Options{});
  hub.MarkSynced();
  EdgeHubServerOptions options;
  options.listen = "127.0.0.1:0";
  options.tls = ::nereid::testing::TestCerts().ServerTls();
  options.keepalive.time = absl::Seconds(1);
  options.keepalive.timeout = absl::Seconds(1);
  auto server = EdgeHubServer::Start(&hub, options);
  REQUIRE(server.ok());

  ::nereid::testing::FreezableProxy proxy((*server)->port());
  ::nereid::testing::TestNode node(proxy.port(), ::nereid::testing::TestCerts(), "edge-a");
  node.Hello("edge-a");
  REQUIRE(node.Next().has_value());  // HelloReply
  REQUIRE(hub.Node("edge-a").connected);

  proxy.Freeze();
  const absl::Time frozen_at = absl::Now();
  const bool disconnected = fakes::Eventually([&] { return !hub.Node("edge-a").connected; },
                                              absl::Seconds(15), absl::Milliseconds(5));
  const absl::Duration detected_after = absl::Now() - frozen_at;
  INFO("detected after " << detected_after);
  CHECK(disconnected);
  // time + timeout = 2 s; allow scheduling slack on a loaded machine.
  CHECK(detected_after < absl::Seconds(8));
  CHECK(hub.metrics().connected_nodes().Value() == 0);
  node.Cancel();
  (*server)->Stop(absl::Seconds(1));
}

}  // namespace
}  // namespace nereid::gm
