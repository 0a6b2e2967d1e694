// The GM's smaller per-connection TLS buffers (globalmanager/edgehub/tls_connection_memory.cc,
// linked into this test; with the static gRPC, also its 2 KiB staging buffers and the 2 KiB first
// TCP read of scripts/grpc-patches): they are in effect, and messages much larger than the
// buffers and the 4 KiB TLS records cross an mTLS Sync stream intact in both directions.

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
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
using ::nereid::testing::CertSet;
using ::nereid::testing::DatasetResource;
using ::nereid::testing::Item;
using ::nereid::testing::MakeCertSet;
using ::nereid::testing::OwnedCertSet;
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

// Issues `node` a certificate from `certs`' CA carrying `padding` bytes in a private extension.
void IssuePaddedNodeCertificate(const CertSet& certs, const std::string& node, int padding) {
  const std::string base = certs.dir + "/nodes/" + node;
  {
    std::ofstream ext(base + ".ext");
    ext << "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n"
        << "extendedKeyUsage=clientAuth\nsubjectAltName=DNS:" << node << "\n"
        << "1.3.6.1.4.1.58888.1=ASN1:UTF8String:" << std::string(padding, 'p') << "\n";
  }
  const std::string command =
      "openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out '" + base +
      ".key' 2>/dev/null && openssl req -new -key '" + base + ".key' -subj /O=nereid/CN=" + node +
      " -out '" + base + ".csr' && openssl x509 -req -in '" + base + ".csr' -CA '" + certs.ca +
      "' -CAkey '" + certs.dir + "/ca.key' -CAcreateserial -CAserial '" + base +
      ".srl' -days 1 -sha256 -extfile '" + base + ".ext' -out '" + base + ".crt' 2>/dev/null";
  REQUIRE(std::system(command.c_str()) == 0);
  REQUIRE(std::filesystem::file_size(base + ".crt") > static_cast<std::uintmax_t>(padding));
}

TEST_CASE("a node whose certificate is far larger than the TLS buffers connects",
          "[edgehub][tls]") {
  // 20 KiB of certificate: its flight is five times the GM's 4 KiB TLS buffer (and larger than
  // OpenSSL's 17 KiB), which the handshake must take in pieces (scripts/grpc-patches/0003).
  std::unique_ptr<OwnedCertSet> certs = MakeCertSet("edge-a");
  IssuePaddedNodeCertificate(certs->set(), "edge-big", 20 * 1024);
  EdgeHub hub(EdgeHub::Options{});
  hub.MarkSynced();
  EdgeHubServerOptions server_options;
  server_options.listen = "127.0.0.1:0";
  server_options.tls = certs->set().ServerTls();
  auto server = EdgeHubServer::Start(&hub, server_options);
  REQUIRE(server.ok());

  TestNode node((*server)->port(), certs->set(), "edge-big");
  node.Hello("edge-big");
  std::optional<v1::SyncResponse> reply = node.Next();
  REQUIRE(reply.has_value());
  CHECK(reply->hello_reply().node_name() == "edge-big");
  REQUIRE(hub.Upsert("edge-big", DatasetResource("ds", "1", "edge-big")).ok());
  std::optional<v1::SyncResponse> done = node.Next();
  REQUIRE(done.has_value());
  CHECK(done->has_resync_done());
  CHECK(node.NextChange().upsert().ref().name() == "ds");
  (*server)->Stop(absl::Seconds(1));
}

}  // namespace
}  // namespace nereid::gm
