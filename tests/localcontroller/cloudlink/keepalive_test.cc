// The LC notices a dead link to the GM through its own keepalive pings (the GM may be the side
// that vanished) and goes back to reconnecting.

#include <catch2/catch.hpp>
#include <memory>

#include "common/time/fake_clock.h"
#include "globalmanager/edgehub/edge_hub.h"
#include "globalmanager/edgehub/server.h"
#include "localcontroller/cloudlink/cloud_link.h"
#include "tests/common/net/tcp_proxy.h"
#include "tests/common/net/test_certs.h"
#include "tests/fakes/eventually.h"
#include "tests/localcontroller/cloudlink/fakes.h"

namespace nereid::lc {
namespace {

TEST_CASE("the link notices a dead link through keepalive pings", "[cloudlink][keepalive]") {
  gm::EdgeHub hub(gm::EdgeHub::Options{});
  hub.MarkSynced();
  gm::EdgeHubServerOptions server_options;
  server_options.listen = "127.0.0.1:0";
  server_options.tls = ::nereid::testing::TestCerts().ServerTls();
  server_options.keepalive.min_client_ping_interval = absl::Milliseconds(500);
  auto server = gm::EdgeHubServer::Start(&hub, server_options);
  REQUIRE(server.ok());
  ::nereid::testing::FreezableProxy proxy((*server)->port());

  testing::FakeStore store;
  testing::FakeOutbox outbox;
  FakeClock clock;
  CloudLinkOptions options;
  options.gm_address = "127.0.0.1:" + std::to_string(proxy.port());
  options.node_name = "edge-a";
  options.tls = ::nereid::testing::TestCerts().ClientTls("edge-a");
  options.clock = &clock;
  options.keepalive.time = absl::Seconds(1);
  options.keepalive.timeout = absl::Seconds(1);
  auto link = CloudLink::Create(options, &store, &outbox);
  REQUIRE(link.ok());
  (*link)->Start();

  const auto wait = [](const std::function<bool()>& pred) {
    return fakes::Eventually(pred, absl::Seconds(30), absl::Milliseconds(5));
  };
  REQUIRE(wait([&] { return (*link)->status().synced; }));
  proxy.Freeze();
  const absl::Time frozen_at = absl::Now();
  const bool noticed = wait([&] { return (*link)->status().state == LinkState::kBackoff; });
  const absl::Duration detected_after = absl::Now() - frozen_at;
  INFO("detected after " << detected_after << ": " << (*link)->status().last_error);
  CHECK(noticed);
  CHECK(detected_after < absl::Seconds(15));
  (*link)->Stop();
  (*server)->Stop(absl::Seconds(1));
}

}  // namespace
}  // namespace nereid::lc
