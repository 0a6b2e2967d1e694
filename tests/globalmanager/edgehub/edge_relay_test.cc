// The edge relay (edge_relay.h): a replica that does not lead joins a node's stream to the leader's
// hub, over real mTLS on loopback, with the GM certificate of the test CA on both replicas.

#include "globalmanager/edgehub/edge_relay.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "common/net/edge_protocol.h"
#include "common/time/fake_clock.h"
#include "globalmanager/edgehub/edge_hub.h"
#include "globalmanager/edgehub/server.h"
#include "tests/common/net/test_certs.h"
#include "tests/fakes/eventually.h"
#include "tests/globalmanager/edgehub/fake_report_handler.h"
#include "tests/globalmanager/edgehub/test_node.h"

namespace nereid::gm {
namespace {

namespace v1 = edge::v1;
using ::nereid::fakes::Eventually;
using ::nereid::gm::testing::FakeReportHandler;
using ::nereid::testing::CertSet;
using ::nereid::testing::DatasetReport;
using ::nereid::testing::DatasetResource;
using ::nereid::testing::Item;
using ::nereid::testing::TestCerts;
using ::nereid::testing::TestNode;

net::TlsOptions Plaintext() {
  net::TlsOptions tls;
  tls.insecure = true;
  return tls;
}

std::string ReadFile(const std::string& path) {
  absl::StatusOr<std::string> pem = net::ReadPemFile(path);
  REQUIRE(pem.ok());
  return *pem;
}

// One GM replica: a hub and its server. The leader accepts streams; a standby relays them.
struct Replica {
  FakeReportHandler handler;
  std::unique_ptr<EdgeRelay> relay;
  std::unique_ptr<EdgeHub> hub;
  std::unique_ptr<EdgeHubServer> server;

  // `insecure`: plaintext, no certificates (--insecure). `relay_certificate`: the PEM file of the
  // certificate trusted to relay (default the GM's). `ownership`: edge shards (null: none).
  Replica(bool leads, const CertSet& certs, bool insecure = false,
          std::string relay_certificate = "", const NodeOwnership* ownership = nullptr,
          Clock* clock = Clock::Real()) {
    if (relay_certificate.empty()) relay_certificate = certs.gm_cert;
    const net::TlsOptions tls =
        insecure ? Plaintext() : certs.ServerTls();
    EdgeHub::Options options;
    options.report_handler = &handler;
    options.accept_streams = leads;
    options.gm_version = leads ? "leader" : "standby";
    options.allow_unauthenticated = insecure;
    options.ownership = ownership;
    options.clock = clock;
    if (!insecure) options.relay_certificate = ReadFile(relay_certificate);
    if (!leads) {
      EdgeRelay::Options relay_options;
      relay_options.tls = tls;
      relay_options.ownership = ownership;
      relay_options.clock = clock;
      auto created = EdgeRelay::Create(relay_options);
      REQUIRE(created.ok());
      relay = std::move(*created);
      options.relay = relay.get();
    }
    hub = std::make_unique<EdgeHub>(options);
    EdgeHubServerOptions server_options;
    server_options.listen = "127.0.0.1:0";
    server_options.tls = tls;
    auto started = EdgeHubServer::Start(hub.get(), server_options);
    REQUIRE(started.ok());
    server = std::move(*started);
  }
  ~Replica() {
    // The server first: it cancels the relayed streams; the relay then waits for them.
    server->Stop(absl::Seconds(1));
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(server->port()); }
};

// A loopback port whose connections wait in the kernel's backlog, never accepted or answered.
class SilentListener {
 public:
  SilentListener() : fd_(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    REQUIRE(fd_ >= 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
    REQUIRE(listen(fd_, 16) == 0);
    socklen_t length = sizeof(address);
    REQUIRE(getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) == 0);
    port_ = ntohs(address.sin_port);
  }
  ~SilentListener() {
    if (fd_ >= 0) close(fd_);
  }
  SilentListener(const SilentListener&) = delete;
  SilentListener& operator=(const SilentListener&) = delete;
  int port() const { return port_; }

 private:
  int fd_;
  int port_ = 0;
};

// A leader and a standby relaying to it; the leader's registry is synced (empty).
struct RelayPair {
  Replica leader;
  Replica standby;
  explicit RelayPair(const CertSet& leader_certs = TestCerts(), bool insecure = false,
                     std::string leader_trusts = "")
      : leader(true, leader_certs, insecure, std::move(leader_trusts)),
        standby(false, TestCerts(), insecure) {
    standby.relay->SetLeaderAddress(leader.address());
    leader.hub->MarkSynced();
  }
};

// Edge shards as a replica sees them: the nodes other replicas own, and where.
class FakeOwnership final : public NodeOwnership {
 public:
  void Set(const std::string& node, const std::string& owner) {
    absl::MutexLock lock(&mu_);
    elsewhere_[node] = owner;
  }
  std::string OwnerElsewhere(std::string_view node) const override {
    absl::MutexLock lock(&mu_);
    auto it = elsewhere_.find(std::string(node));
    return it != elsewhere_.end() ? it->second : "";
  }

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, std::string> elsewhere_ ABSL_GUARDED_BY(mu_);
};

v1::SyncResponse Expect(TestNode& node) {
  auto response = node.Next();
  REQUIRE(response.has_value());
  return *response;
}

TEST_CASE("a standby relays a node's stream to the leader's hub, both ways", "[edgehub][relay]") {
  RelayPair pair;
  Replica& leader = pair.leader;
  Replica& standby = pair.standby;
  REQUIRE(leader.hub->Upsert("edge-a", DatasetResource("ds", "1", "edge-a")).ok());

  auto node = std::make_unique<TestNode>(standby.server->port(), TestCerts(), "edge-a");
  node->Hello("edge-a", {Item("Dataset", "stale", "1")});
  v1::SyncResponse hello = Expect(*node);
  REQUIRE(hello.has_hello_reply());
  CHECK(hello.hello_reply().gm_version() == "leader");
  v1::Change upsert = node->NextChange();
  CHECK(upsert.upsert().ref().name() == "ds");
  node->Ack(upsert);
  v1::Change remove = node->NextChange();
  CHECK(remove.remove().ref().name() == "stale");
  node->Ack(remove);
  REQUIRE(Expect(*node).has_resync_done());
  CHECK(Eventually([&] { return leader.hub->metrics().changes_acked().Value() == 2; }));
  CHECK(leader.hub->Node("edge-a").connected);
  CHECK_FALSE(standby.hub->Node("edge-a").connected);
  CHECK(standby.relay->open_streams() == 1);

  // A report crosses to the leader's handler under the node's name; its ACK comes back.
  node->Report(DatasetReport(7, "ds", 3));
  FakeReportHandler::Call& call = leader.handler.WaitForCall(1);
  CHECK(call.node == "edge-a");
  CHECK(call.report->dataset().number_of_samples() == 3);
  call.done(ReportOutcome::Accepted());
  v1::ReportAck ack = node->NextReportAck();
  CHECK(ack.seq() == 7);
  CHECK(ack.result() == v1::REPORT_ACCEPTED);
  // A change made later flows too.
  REQUIRE(leader.hub->Upsert("edge-a", DatasetResource("ds", "2", "edge-a")).ok());
  CHECK(node->NextChange().upsert().version() == "2");
  CHECK(standby.handler.calls() == 0);

  // The node goes away: the leader's stream for it ends and the relay lets go of it.
  node->Cancel();
  CHECK(Eventually([&] { return !leader.hub->Node("edge-a").connected; }));
  CHECK(Eventually([&] { return standby.relay->open_streams() == 0; }));
  CHECK(standby.relay->failures() == 0);
}

TEST_CASE("the leader ending a relayed stream ends the node's, with its status and trailer",
          "[edgehub][relay]") {
  RelayPair pair;
  Replica& leader = pair.leader;
  Replica& standby = pair.standby;
  auto node = std::make_unique<TestNode>(standby.server->port(), TestCerts(), "edge-a");
  node->Hello("edge-a");
  REQUIRE(Expect(*node).has_hello_reply());
  REQUIRE(Expect(*node).has_resync_done());

  // The leader steps down and names another replica as the owner.
  leader.hub->SetOwnerAddress("127.0.0.1:1");
  leader.hub->SetAcceptingStreams(false);
  grpc::Status status = node->AwaitEnd();
  CHECK(status.error_code() == grpc::StatusCode::UNAVAILABLE);
  CHECK(Eventually([&] { return standby.relay->open_streams() == 0; }));

  // A new stream is relayed again and refused by the leader with its hint, passed through.
  auto again = std::make_unique<TestNode>(standby.server->port(), TestCerts(), "edge-a");
  again->Hello("edge-a");
  CHECK(again->AwaitEnd().error_code() == grpc::StatusCode::UNAVAILABLE);
  CHECK(again->Trailer(net::kEdgeOwnerTrailer) == "127.0.0.1:1");
}

TEST_CASE("a relay the leader does not answer sends the node to the leader's address",
          "[edgehub][relay]") {
  // The leader's certificates come from another CA: the relay's handshake fails both ways.
  std::unique_ptr<nereid::testing::OwnedCertSet> other = nereid::testing::MakeCertSet("edge-a");
  RelayPair pair(other->set());
  Replica& leader = pair.leader;
  Replica& standby = pair.standby;

  auto node = std::make_unique<TestNode>(standby.server->port(), TestCerts(), "edge-a");
  node->Hello("edge-a");
  grpc::Status status = node->AwaitEnd();
  CHECK(status.error_code() == grpc::StatusCode::UNAVAILABLE);
  CHECK(node->Trailer(net::kEdgeOwnerTrailer) == leader.address());
  CHECK(Eventually([&] { return standby.relay->open_streams() == 0; }));
  CHECK(standby.relay->failures() == 1);
  CHECK_FALSE(leader.hub->Node("edge-a").connected);
}

TEST_CASE("a relayed Hello is checked on the standby before anything reaches the leader",
          "[edgehub][relay]") {
  RelayPair pair;
  Replica& leader = pair.leader;
  Replica& standby = pair.standby;

  auto node = std::make_unique<TestNode>(standby.server->port(), TestCerts(), "edge-a");
  node->Hello("edge-b");
  CHECK(node->AwaitEnd().error_code() == grpc::StatusCode::PERMISSION_DENIED);
  CHECK_FALSE(leader.hub->Node("edge-b").connected);
  CHECK(leader.hub->metrics().refused_identities().Value() == 0);  // never got that far
}

TEST_CASE("a standby ends a relayed stream that sends no Hello; one that did goes on",
          "[edgehub][relay]") {
  FakeClock clock;
  Replica leader(true, TestCerts());
  Replica standby(false, TestCerts(), false, "", nullptr, &clock);
  standby.relay->SetLeaderAddress(leader.address());
  leader.hub->MarkSynced();
  REQUIRE(leader.hub->Upsert("edge-b", DatasetResource("ds", "1", "edge-b")).ok());

  auto speaking = std::make_unique<TestNode>(standby.server->port(), TestCerts(), "edge-b");
  speaking->Hello("edge-b");
  REQUIRE(Expect(*speaking).has_hello_reply());
  auto silent = std::make_unique<TestNode>(standby.server->port(), TestCerts(), "edge-a");
  REQUIRE(Eventually([&] {
    clock.Advance(absl::Seconds(30));
    standby.hub->EndStreamsWithoutHello();
    return silent->Ended();
  }));
  grpc::Status status = silent->AwaitEnd();
  CHECK(status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED);
  CHECK(status.error_message() == "no Hello within 2m of opening the stream");
  CHECK(standby.hub->metrics().hello_timeouts().Value() == 1);
  CHECK(leader.hub->metrics().hello_timeouts().Value() == 0);  // it never saw that stream

  CHECK_FALSE(speaking->Ended());
  CHECK(leader.hub->Node("edge-b").connected);
  CHECK(speaking->NextChange().upsert().version() == "1");
  REQUIRE(Expect(*speaking).has_resync_done());
  REQUIRE(leader.hub->Upsert("edge-b", DatasetResource("ds", "2", "edge-b")).ok());
  CHECK(speaking->NextChange().upsert().version() == "2");
}

TEST_CASE("only the GM's certificate may speak for another node", "[edgehub][relay]") {
  Replica leader(true, TestCerts());
  leader.hub->MarkSynced();
  const std::vector<std::pair<std::string, std::string>> claim = {
      {net::kRelayedNodeMetadata, "edge-b"}};

  // A node adding the relay's metadata is still only itself.
  TestNode node(TestNode::Channel(leader.server->port(), TestCerts().ClientTls("edge-a")), claim);
  node.Hello("edge-b");
  CHECK(node.AwaitEnd().error_code() == grpc::StatusCode::PERMISSION_DENIED);
  CHECK(leader.hub->metrics().refused_identities().Value() == 1);

  // The GM's certificate with the metadata speaks for the node it names, and only that one.
  TestNode relayed(TestNode::Channel(leader.server->port(), TestCerts().ServerTls()), claim);
  relayed.Hello("edge-b");
  REQUIRE(Expect(relayed).has_hello_reply());
  CHECK(leader.hub->Node("edge-b").connected);
  TestNode other(TestNode::Channel(leader.server->port(), TestCerts().ServerTls()), claim);
  other.Hello("edge-c");
  CHECK(other.AwaitEnd().error_code() == grpc::StatusCode::PERMISSION_DENIED);
}

TEST_CASE("a node connection holds a bounded number of streams; a relay's is not bounded",
          "[edgehub][relay]") {
  Replica leader(true, TestCerts());
  leader.hub->MarkSynced();
  std::shared_ptr<grpc::Channel> node_channel =
      TestNode::Channel(leader.server->port(), TestCerts().ClientTls("edge-a"));
  // Nine streams, none past its Hello yet: one of them is refused at once.
  std::vector<std::unique_ptr<TestNode>> streams;
  for (int i = 0; i < 9; ++i) streams.push_back(std::make_unique<TestNode>(node_channel));
  auto ended = [&] {
    return std::count_if(streams.begin(), streams.end(), [](auto& s) { return s->Ended(); });
  };
  REQUIRE(Eventually([&] { return ended() == 1; }));
  auto refused = std::find_if(streams.begin(), streams.end(), [](auto& s) { return s->Ended(); });
  CHECK((*refused)->AwaitEnd().error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED);
  streams.erase(refused);
  // One more ending makes room for one more, once the hub has seen it end.
  streams.front()->Cancel();
  streams.erase(streams.begin());
  std::unique_ptr<TestNode> next;
  CHECK(Eventually([&] {
    next = std::make_unique<TestNode>(node_channel);
    next->Hello("edge-a");
    std::optional<v1::SyncResponse> reply = next->Next();
    return reply.has_value() && reply->has_hello_reply();
  }));
  CHECK(ended() == 0);

  std::shared_ptr<grpc::Channel> relay_channel =
      TestNode::Channel(leader.server->port(), TestCerts().ServerTls());
  std::vector<std::unique_ptr<TestNode>> relayed;
  for (int i = 0; i < 12; ++i) {
    const std::string name = "relayed-" + std::to_string(i);
    relayed.push_back(std::make_unique<TestNode>(
        relay_channel, std::vector<std::pair<std::string, std::string>>{
                           {net::kRelayedNodeMetadata, name}}));
    relayed.back()->Hello(name);
    REQUIRE(Expect(*relayed.back()).has_hello_reply());
  }
  CHECK(leader.hub->metrics().connected_nodes().Value() == 13);  // with edge-a
}

TEST_CASE("a leader that refuses the relay's certificate sends the node to its address",
          "[edgehub][relay]") {
  // As replicas holding different GM certificates of one CA (a renewal half rolled out): the
  // leader trusts another certificate to relay, so the standby's is just a certificate that is
  // not the node's.
  RelayPair pair(TestCerts(), false, TestCerts().NodeCert("edge-c"));
  auto node = std::make_unique<TestNode>(pair.standby.server->port(), TestCerts(), "edge-a");
  node->Hello("edge-a");
  CHECK(node->AwaitEnd().error_code() == grpc::StatusCode::UNAVAILABLE);
  CHECK(node->Trailer(net::kEdgeOwnerTrailer) == pair.leader.address());
  CHECK(Eventually([&] { return pair.standby.relay->open_streams() == 0; }));
  CHECK(pair.standby.relay->failures() == 1);
}

TEST_CASE("a node leaving while the relay still connects is not a relay failure",
          "[edgehub][relay]") {
  // A leader that accepts TCP connections and never answers: the relay's call waits to connect.
  SilentListener silent;
  Replica standby(false, TestCerts());
  standby.relay->SetLeaderAddress("127.0.0.1:" + std::to_string(silent.port()));

  auto node = std::make_unique<TestNode>(standby.server->port(), TestCerts(), "edge-a");
  node->Hello("edge-a");
  REQUIRE(Eventually([&] { return standby.relay->open_streams() == 1; }));
  node->Cancel();
  CHECK(Eventually([&] { return standby.relay->open_streams() == 0; }));
  CHECK(standby.relay->failures() == 0);
}

TEST_CASE("a standby counts a node connection's streams as the leader would", "[edgehub][relay]") {
  RelayPair pair;
  std::shared_ptr<grpc::Channel> channel =
      TestNode::Channel(pair.standby.server->port(), TestCerts().ClientTls("edge-a"));
  std::vector<std::unique_ptr<TestNode>> streams;
  for (int i = 0; i < 9; ++i) streams.push_back(std::make_unique<TestNode>(channel));
  REQUIRE(Eventually([&] {
    return std::count_if(streams.begin(), streams.end(), [](auto& s) { return s->Ended(); }) == 1;
  }));
  auto refused = std::find_if(streams.begin(), streams.end(), [](auto& s) { return s->Ended(); });
  CHECK((*refused)->AwaitEnd().error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED);
  CHECK(pair.standby.relay->open_streams() == 8);
}

TEST_CASE("with --insecure, a standby relays more nodes than one node connection may hold",
          "[edgehub][relay]") {
  RelayPair pair(TestCerts(), /*insecure=*/true);
  Replica& leader = pair.leader;
  Replica& standby = pair.standby;
  std::vector<std::unique_ptr<TestNode>> nodes;
  for (int i = 0; i < 12; ++i) {
    const std::string name = "plain-" + std::to_string(i);
    nodes.push_back(std::make_unique<TestNode>(
        TestNode::Channel(standby.server->port(), Plaintext())));
    nodes.back()->Hello(name);
    v1::SyncResponse reply = Expect(*nodes.back());
    REQUIRE(reply.has_hello_reply());
    CHECK(reply.hello_reply().gm_version() == "leader");
  }
  CHECK(leader.hub->metrics().connected_nodes().Value() == 12);
  CHECK(standby.relay->open_streams() == 12);

  // A name that is not a node name never travels on (it would not be a valid metadata value).
  TestNode bad(TestNode::Channel(standby.server->port(), Plaintext()));
  bad.Hello("two\nlines");
  CHECK(bad.AwaitEnd().error_code() == grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_CASE("with edge shards, a node is served by its owner and sent there by the others; its "
          "stream moves when asked",
          "[edgehub][relay][shards]") {
  FakeOwnership leader_sees;
  FakeOwnership standby_sees;
  Replica leader(true, TestCerts(), false, "", &leader_sees);
  Replica standby(false, TestCerts(), false, "", &standby_sees);
  standby.relay->SetLeaderAddress(leader.address());
  leader.hub->MarkSynced();
  // The standby owns edge-a; a third replica owns edge-b; the leader owns edge-c.
  leader_sees.Set("edge-a", standby.address());
  leader_sees.Set("edge-b", "127.0.0.1:7");
  standby_sees.Set("edge-b", "127.0.0.1:7");
  standby_sees.Set("edge-c", leader.address());

  SECTION("the standby sends a node it does not own to its owner, before any relay") {
    TestNode node(standby.server->port(), TestCerts(), "edge-b");
    node.Hello("edge-b");
    CHECK(node.AwaitEnd().error_code() == grpc::StatusCode::UNAVAILABLE);
    CHECK(node.Trailer(net::kEdgeOwnerTrailer) == "127.0.0.1:7");
    CHECK(Eventually([&] { return standby.relay->open_streams() == 0; }));
    CHECK(standby.relay->failures() == 0);
    CHECK_FALSE(leader.hub->Node("edge-b").connected);
    CHECK(standby.relay->redirects() == 1);
  }
  SECTION("a node its owner did not serve is served wherever it lands, and not moved back") {
    const std::vector<std::pair<std::string, std::string>> unserved = {
        {net::kUnservedOwnerMetadata, "127.0.0.1:7"}};
    TestNode relayed(TestNode::Channel(standby.server->port(), TestCerts().ClientTls("edge-b")),
                     unserved);
    relayed.Hello("edge-b");
    REQUIRE(Expect(relayed).has_hello_reply());
    CHECK(leader.hub->Node("edge-b").connected);
    CHECK(standby.relay->MoveNodes({{"edge-b", "127.0.0.1:7"}}) == 0);
    leader_sees.Set("edge-b", "127.0.0.1:8");  // an owner it did not name: sent there
    TestNode direct(TestNode::Channel(leader.server->port(), TestCerts().ClientTls("edge-b")),
                    unserved);
    direct.Hello("edge-b");
    CHECK(direct.AwaitEnd().error_code() == grpc::StatusCode::UNAVAILABLE);
    CHECK(direct.Trailer(net::kEdgeOwnerTrailer) == "127.0.0.1:8");
    leader_sees.Set("edge-b", "127.0.0.1:7");
    TestNode served(TestNode::Channel(leader.server->port(), TestCerts().ClientTls("edge-b")),
                    unserved);
    served.Hello("edge-b");
    REQUIRE(Expect(served).has_hello_reply());
    CHECK(leader.hub->DirectNodes() == std::vector<std::string>{"edge-b"});
    CHECK_FALSE(leader.hub->MoveNode("edge-b", "127.0.0.1:7"));
  }
  SECTION("the leader sends a node dialling it directly to its owner") {
    TestNode node(leader.server->port(), TestCerts(), "edge-a");
    node.Hello("edge-a");
    CHECK(node.AwaitEnd().error_code() == grpc::StatusCode::UNAVAILABLE);
    CHECK(node.Trailer(net::kEdgeOwnerTrailer) == standby.address());
    CHECK(leader.hub->metrics().streams_redirected().Value() == 1);
    CHECK_FALSE(leader.hub->Node("edge-a").connected);
  }
  SECTION("the owner relays its node, the leader serves the relayed stream, and it moves") {
    TestNode node(standby.server->port(), TestCerts(), "edge-a");
    node.Hello("edge-a");
    REQUIRE(Expect(node).has_hello_reply());
    REQUIRE(Expect(node).has_resync_done());
    CHECK(leader.hub->Node("edge-a").connected);
    CHECK(leader.hub->DirectNodes().empty());  // relayed: not the leader's to move
    CHECK(standby.relay->Nodes() == std::vector<std::string>{"edge-a"});
    CHECK_FALSE(leader.hub->MoveNode("edge-a", "127.0.0.1:9"));

    const absl::flat_hash_map<std::string, std::string> moves = {{"edge-a", "127.0.0.1:9"},
                                                                 {"edge-b", "127.0.0.1:9"}};
    REQUIRE(standby.relay->MoveNodes(moves) == 1);
    CHECK(standby.relay->Nodes().empty());   // ending: not listed to move again
    CHECK(standby.relay->MoveNodes(moves) == 0);  // nor counted again
    CHECK(node.AwaitEnd().error_code() == grpc::StatusCode::UNAVAILABLE);
    CHECK(node.Trailer(net::kEdgeOwnerTrailer) == "127.0.0.1:9");
    CHECK(Eventually([&] { return !leader.hub->Node("edge-a").connected; }));
    CHECK(Eventually([&] { return standby.relay->open_streams() == 0; }));
    CHECK(standby.relay->failures() == 0);
  }
  SECTION("the leader serves the node it owns, and moves it when asked") {
    TestNode node(leader.server->port(), TestCerts(), "edge-c");
    node.Hello("edge-c");
    REQUIRE(Expect(node).has_hello_reply());
    REQUIRE(Expect(node).has_resync_done());
    CHECK(leader.hub->DirectNodes() == std::vector<std::string>{"edge-c"});
    REQUIRE(leader.hub->MoveNode("edge-c", "127.0.0.1:9"));
    CHECK_FALSE(leader.hub->MoveNode("edge-c", "127.0.0.1:9"));  // ending: not moved twice
    CHECK(node.AwaitEnd().error_code() == grpc::StatusCode::UNAVAILABLE);
    CHECK(node.Trailer(net::kEdgeOwnerTrailer) == "127.0.0.1:9");
    CHECK(Eventually([&] { return leader.hub->DirectNodes().empty(); }));
  }
}

}  // namespace
}  // namespace nereid::gm
