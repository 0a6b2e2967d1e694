// The GM's smaller per-connection TLS buffers (globalmanager/edgehub/tls_connection_memory.cc,
// linked into this test; with the static gRPC, also its 2 KiB staging buffers and the 2 KiB first
// TCP read of scripts/grpc-patches): they are in effect, and messages much larger than the
// buffers and the 4 KiB TLS records cross an mTLS Sync stream intact in both directions.

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "globalmanager/edgehub/edge_hub.h"
#include "globalmanager/edgehub/server.h"
#include "openssl/ssl.h"
#include "tests/common/net/test_certs.h"
#include "tests/globalmanager/edgehub/test_node.h"

namespace nereid::gm {
namespace {

namespace v1 = edge::v1;
using ::nereid::testing::DatasetResource;
using ::nereid::testing::Item;
using ::nereid::testing::TestCerts;
using ::nereid::testing::TestNode;

TEST_CASE("every new TLS connection frees its record buffers when idle", "[edgehub][tls]") {
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  REQUIRE(ctx != nullptr);
  SSL* ssl = SSL_new(ctx);
  REQUIRE(ssl != nullptr);
  CHECK((SSL_get_mode(ssl) & SSL_MODE_RELEASE_BUFFERS) != 0);
  SSL_free(ssl);
  SSL_CTX_free(ctx);
}

TEST_CASE("messages far larger than the TLS buffers cross an mTLS stream both ways",
          "[edgehub][tls]") {
  EdgeHub hub(EdgeHub::Options{});
  EdgeHubServerOptions server_options;
  server_options.listen = "127.0.0.1:0";
  server_options.tls = TestCerts().ServerTls();
  auto server = EdgeHubServer::Start(&hub, server_options);
  REQUIRE(server.ok());

  // Upstream: a Hello whose inventory (2,000 items, over 100 KiB) matches the registry.
  constexpr int kObjects = 2000;
  std::vector<v1::InventoryItem> inventory;
  for (int i = 0; i < kObjects; ++i) {
    const std::string name = "dataset-with-a-longish-name-" + std::to_string(i);
    REQUIRE(hub.Upsert("edge-a", DatasetResource(name, "1", "edge-a")).ok());
    inventory.push_back(Item("Dataset", name, "1"));
  }
  hub.MarkSynced();
  TestNode node((*server)->port(), TestCerts(), "edge-a");
  node.Hello("edge-a", inventory);
  std::optional<v1::SyncResponse> reply = node.Next();
  REQUIRE(reply.has_value());
  REQUIRE(reply->has_hello_reply());
  std::optional<v1::SyncResponse> done = node.Next();
  REQUIRE(done.has_value());
  REQUIRE(done->has_resync_done());
  CHECK(done->resync_done().upserts() == 0);
  CHECK(done->resync_done().removes() == 0);

  // Downstream: one change of ~200 KiB, 50 TLS records of the GM's 4 KiB.
  v1::Resource big = DatasetResource("big", "1", "edge-a");
  const std::string url = "/data/" + std::string(200 * 1024, 'x');
  big.mutable_dataset()->set_url(url);
  REQUIRE(hub.Upsert("edge-a", big).ok());
  v1::Change change = node.NextChange();
  REQUIRE(change.has_upsert());
  CHECK(change.upsert().dataset().url() == url);
  (*server)->Stop(absl::Seconds(1));
}

}  // namespace
}  // namespace nereid::gm
