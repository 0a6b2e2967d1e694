// Two GlobalManager replicas on one Lease, as the Deployment runs them, and a LocalController
// given the standby's address (a Service whose endpoints lag, or a node configured with one
// replica's address):
//   - the leader writes where its edge hub takes nodes into the Lease (nereid.io/edge-address);
//   - the standby relays the node's stream to the leader (--edge-relay, the default): the node
//     stays connected to the standby and counting reaches status through the leader;
//   - or, with --edge-relay=false, the standby refuses the node's stream with that address in the
//     trailer nereid-edge-owner, and the node dials the leader at once (no backoff), verified
//     under its configured name;
//   - the leader stops: the standby takes the Lease, the node's next dial (its configured
//     address) lands there, and counting goes on; a restarted replica stays the standby;
//   - with --edge-shards, each replica serves the nodes rendezvous hashing gives it and sends the
//     others there; a node follows its owner away and back as that replica stops and restarts.

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "globalmanager/edgehub/rendezvous.h"
#include "nlohmann/json.hpp"
#include "tests/common/net/test_certs.h"
#include "tests/integration/edge_cluster.h"
#include "tests/integration/loopback_helpers.h"

namespace nereid {
namespace {

using Json = nlohmann::json;
using testing::AppendLines;
using testing::DatasetYaml;
using testing::EdgeCluster;
using testing::GmProcess;
using testing::Lc;
using testing::WaitFor;

constexpr absl::Duration kPoll = testing::kEdgePoll;

std::string LinkServer(const Lc& lc) {
  Json status = lc.Status();
  if (!status.is_object() || !status["cloudLink"]["server"].is_string()) return "";
  return status["cloudLink"]["server"].get<std::string>();
}

std::string LeaseEdgeAddress(EdgeCluster& cluster) {
  return cluster.Kubectl({"get", "lease", "-n", "default", "nereid-gm", "-o",
                          "jsonpath={.metadata.annotations.nereid\\.io/edge-address}"});
}

double Redirected(const GmProcess& gm) {
  return testing::MetricValue(gm.Metrics(), "nereid_edgehub_streams_redirected_total");
}

double RelayedNow(const GmProcess& gm) {
  return testing::MetricValue(gm.Metrics(), "nereid_edgehub_relayed_streams");
}

double Moved(const GmProcess& gm) {
  return testing::MetricValue(gm.Metrics(), "nereid_gm_edge_nodes_moved_total");
}

double ShardReplicas(const GmProcess& gm) {
  return testing::MetricValue(gm.Metrics(), "nereid_gm_edge_shard_replicas");
}

double ConnectedNodes(const GmProcess& gm) {
  return testing::MetricValue(gm.Metrics(), "nereid_edgehub_connected_nodes");
}

// A node's data directory with lines 1..lines in `file`; returns the directory.
std::string NodeData(EdgeCluster& cluster, const std::string& node, const std::string& file,
                     int lines) {
  const std::string data = cluster.dir().File("root-" + node + "/data");
  std::filesystem::create_directories(data);
  AppendLines(data + "/" + file, 1, lines);
  return data;
}

void AwaitLeader(const GmProcess& gm) {
  REQUIRE(WaitFor([&] { return gm.Ready(); }, absl::Seconds(20), kPoll));
}

void AwaitStandby(const GmProcess& gm) {
  REQUIRE(WaitFor([&] { return testing::HttpGet(gm.http_port, "/healthz").status == 200; },
                  absl::Seconds(20), kPoll));
  CHECK_FALSE(gm.Ready());
}

// gm-a leads, gm-b stands by; both with `args`.
struct Replicas {
  int port_a = testing::FreePort();
  int port_b = testing::FreePort();
  std::string address_a = absl::StrCat("127.0.0.1:", port_a);
  std::string address_b = absl::StrCat("127.0.0.1:", port_b);
  std::vector<std::string> args;
  GmProcess a;
  GmProcess b;

  Replicas(EdgeCluster& cluster, std::vector<std::string> replica_args)
      : args(std::move(replica_args)) {
    a = cluster.LaunchGm("gm-a", port_a, args);
    AwaitLeader(a);
    b = cluster.LaunchGm("gm-b", port_b, args);
    AwaitStandby(b);
  }
  // The leader stops and releases the Lease; gm-b leads.
  void StopLeader() {
    auto code = a.process->Stop(absl::Seconds(15));
    REQUIRE(code.ok());
    CHECK(*code == 0);
    AwaitLeader(b);
  }
  void RestartA(EdgeCluster& cluster) {
    a = cluster.LaunchGm("gm-a", port_a, args);
    AwaitStandby(a);
  }
};

// A bare host: the replica adds the port of --listen.
const std::vector<std::string> kAdvertise = {"--edge-advertise-address", "127.0.0.1"};

TEST_CASE("without the relay, a node given the standby's address is sent to the leader, and "
          "follows the Lease when the leader stops",
          "[integration][ha]") {
  EdgeCluster cluster(testing::BuiltEdgeBinaries(), "gm-replicas-");
  const std::string data = NodeData(cluster, "edge-a", "a.txt", 10);
  std::vector<std::string> args = kAdvertise;
  args.push_back("--edge-relay=false");
  Replicas gms(cluster, args);
  CHECK(LeaseEdgeAddress(cluster) == gms.address_a);

  const testing::CertSet& certs = testing::TestCerts();
  Lc lc = cluster.StartLc("edge-a", certs.NodeCert("edge-a"), certs.NodeKey("edge-a"), "", {},
                          {"--gm", gms.address_b});
  cluster.Kubectl({"apply", "-f", "-"}, DatasetYaml("da", "edge-a", "/data/a.txt"));
  REQUIRE(cluster.WaitSamples("da", 10, absl::Seconds(30)));
  CHECK(LinkServer(lc) == gms.address_a);
  CHECK(lc.LinkCounter("redirects") >= 1);
  CHECK(Redirected(gms.b) >= 1);
  CHECK(gms.a.DatasetReports("accepted") >= 1);

  // The standby leads, and the node, whose stream ended, dials its configured address again and
  // lands there.
  gms.StopLeader();
  CHECK(WaitFor([&] { return LeaseEdgeAddress(cluster) == gms.address_b; }, absl::Seconds(10),
                kPoll));
  AppendLines(data + "/a.txt", 11, 15);
  CHECK(cluster.WaitSamples("da", 15, absl::Seconds(30)));
  CHECK(WaitFor([&] { return lc.Synced() && LinkServer(lc) == gms.address_b; },
                absl::Seconds(30), kPoll));
  CHECK(gms.b.DatasetReports("accepted") >= 1);

  // gm-a comes back as the standby: the node stays where it is.
  gms.RestartA(cluster);
  AppendLines(data + "/a.txt", 16, 18);
  CHECK(cluster.WaitSamples("da", 18, absl::Seconds(30)));
  CHECK(LinkServer(lc) == gms.address_b);
  CHECK(LeaseEdgeAddress(cluster) == gms.address_b);
}

TEST_CASE("a node given the standby's address is relayed to the leader, and is served by the "
          "standby itself once it leads",
          "[integration][ha]") {
  EdgeCluster cluster(testing::BuiltEdgeBinaries(), "gm-relay-");
  const std::string data = NodeData(cluster, "edge-a", "a.txt", 10);
  Replicas gms(cluster, kAdvertise);

  const testing::CertSet& certs = testing::TestCerts();
  Lc lc = cluster.StartLc("edge-a", certs.NodeCert("edge-a"), certs.NodeKey("edge-a"), "", {},
                          {"--gm", gms.address_b});
  cluster.Kubectl({"apply", "-f", "-"}, DatasetYaml("da", "edge-a", "/data/a.txt"));
  REQUIRE(cluster.WaitSamples("da", 10, absl::Seconds(30)));
  // The node's connection is the standby's; its stream, state and reports are the leader's.
  CHECK(LinkServer(lc) == gms.address_b);
  CHECK(lc.Synced());
  CHECK(lc.LinkCounter("redirects") == 0);
  CHECK(Redirected(gms.b) == 0);
  CHECK(RelayedNow(gms.b) == 1);
  CHECK(ConnectedNodes(gms.a) == 1);
  CHECK(ConnectedNodes(gms.b) == 0);
  CHECK(gms.a.DatasetReports("accepted") >= 1);
  AppendLines(data + "/a.txt", 11, 12);
  CHECK(cluster.WaitSamples("da", 12, absl::Seconds(30)));

  // The leader stops: the relayed stream ends with it, the standby leads, and the node's next
  // dial of the same address is served there directly.
  gms.StopLeader();
  AppendLines(data + "/a.txt", 13, 15);
  CHECK(cluster.WaitSamples("da", 15, absl::Seconds(30)));
  CHECK(WaitFor([&] { return ConnectedNodes(gms.b) == 1 && RelayedNow(gms.b) == 0; },
                absl::Seconds(30), kPoll));
  CHECK(LinkServer(lc) == gms.address_b);
  CHECK(gms.b.DatasetReports("accepted") >= 1);

  // gm-a comes back as the standby and relays a second node to gm-b.
  gms.RestartA(cluster);
  NodeData(cluster, "edge-b", "b.txt", 4);
  Lc lc_b = cluster.StartLc("edge-b", certs.NodeCert("edge-b"), certs.NodeKey("edge-b"), "", {},
                            {"--gm", gms.address_a});
  cluster.Kubectl({"apply", "-f", "-"}, DatasetYaml("db", "edge-b", "/data/b.txt"));
  CHECK(cluster.WaitSamples("db", 4, absl::Seconds(30)));
  CHECK(WaitFor([&] { return RelayedNow(gms.a) == 1 && ConnectedNodes(gms.b) == 2; },
                absl::Seconds(30), kPoll));
  CHECK_FALSE(gms.a.Ready());
}

TEST_CASE("with --ready-while-relaying, a standby is ready while it can relay to the leader",
          "[integration][ha]") {
  EdgeCluster cluster(testing::BuiltEdgeBinaries(), "gm-ready-relay-");
  const std::vector<std::string> args = {"--ready-while-relaying"};
  // The leader does not advertise an edge address: a standby has nowhere to relay to.
  GmProcess a = cluster.LaunchGm("gm-a", testing::FreePort(), args);
  AwaitLeader(a);
  const int port_b = testing::FreePort();
  GmProcess b = cluster.LaunchGm("gm-b", port_b, args);
  REQUIRE(WaitFor(
      [&] {
        return testing::HttpGet(b.http_port, "/readyz").body.find("leader: gm-a") !=
               std::string::npos;
      },
      absl::Seconds(20), kPoll));
  CHECK(testing::HttpGet(b.http_port, "/readyz").status == 503);
  CHECK(b.process->Stop(absl::Seconds(15)).ok());

  // With an address on the Lease, the standby relays and reports ready, but does not lead.
  const int port_c = testing::FreePort();
  std::vector<std::string> advertised = args;
  advertised.insert(advertised.end(), kAdvertise.begin(), kAdvertise.end());
  auto code = a.process->Stop(absl::Seconds(15));
  REQUIRE(code.ok());
  a = cluster.LaunchGm("gm-a", testing::FreePort(), advertised);
  AwaitLeader(a);
  GmProcess c = cluster.LaunchGm("gm-c", port_c, advertised);
  CHECK(WaitFor([&] { return c.Ready(); }, absl::Seconds(20), kPoll));
  CHECK(testing::MetricValue(c.Metrics(), "nereid_gm_leader") == 0);
  CHECK(testing::MetricValue(a.Metrics(), "nereid_gm_leader") == 1);

  // A node dialling it is relayed to the leader.
  NodeData(cluster, "edge-a", "a.txt", 3);
  const testing::CertSet& certs = testing::TestCerts();
  Lc lc = cluster.StartLc("edge-a", certs.NodeCert("edge-a"), certs.NodeKey("edge-a"), "", {},
                          {"--gm", absl::StrCat("127.0.0.1:", port_c)});
  cluster.Kubectl({"apply", "-f", "-"}, DatasetYaml("da", "edge-a", "/data/a.txt"));
  CHECK(cluster.WaitSamples("da", 3, absl::Seconds(30)));
  CHECK(RelayedNow(c) == 1);
}

TEST_CASE("with --edge-shards, each replica serves the nodes hashed to it; a node follows its "
          "owner away and back",
          "[integration][ha]") {
  // The hash is a fixed function of the names (rendezvous_test pins it): with gm-a and gm-b
  // live, gm-a owns edge-a and gm-b owns edge-c.
  REQUIRE(gm::RendezvousOwner("edge-a", {"gm-a", "gm-b"}) == "gm-a");
  REQUIRE(gm::RendezvousOwner("edge-c", {"gm-a", "gm-b"}) == "gm-b");
  EdgeCluster cluster(testing::BuiltEdgeBinaries(), "gm-shards-");
  const std::string data_a = NodeData(cluster, "edge-a", "a.txt", 5);
  const std::string data_c = NodeData(cluster, "edge-c", "c.txt", 7);
  std::vector<std::string> args = kAdvertise;
  args.push_back("--edge-shards");
  Replicas gms(cluster, args);
  REQUIRE(WaitFor([&] { return ShardReplicas(gms.a) == 2 && ShardReplicas(gms.b) == 2; },
                  absl::Seconds(20), kPoll));
  CHECK(cluster.Kubectl({"get", "lease", "-n", "default", "-l", "nereid.io/edge-shard=nereid-gm",
                         "-o", "jsonpath={.items[*].metadata.name}"}) ==
        "nereid-gm-edge-gm-a nereid-gm-edge-gm-b");

  // Each node is given the other replica's address and lands on its owner: edge-c on the
  // standby, which relays it to the leader; edge-a on the leader.
  const testing::CertSet& certs = testing::TestCerts();
  Lc lc_c = cluster.StartLc("edge-c", certs.NodeCert("edge-c"), certs.NodeKey("edge-c"), "", {},
                            {"--gm", gms.address_a});
  Lc lc_a = cluster.StartLc("edge-a", certs.NodeCert("edge-a"), certs.NodeKey("edge-a"), "", {},
                            {"--gm", gms.address_b});
  cluster.Kubectl({"apply", "-f", "-"}, DatasetYaml("dc", "edge-c", "/data/c.txt"));
  cluster.Kubectl({"apply", "-f", "-"}, DatasetYaml("da", "edge-a", "/data/a.txt"));
  REQUIRE(cluster.WaitSamples("dc", 7, absl::Seconds(30)));
  REQUIRE(cluster.WaitSamples("da", 5, absl::Seconds(30)));
  CHECK(LinkServer(lc_c) == gms.address_b);
  CHECK(LinkServer(lc_a) == gms.address_a);
  CHECK(lc_c.LinkCounter("redirects") >= 1);
  CHECK(lc_a.LinkCounter("redirects") >= 1);
  CHECK(RelayedNow(gms.b) == 1);
  CHECK(ConnectedNodes(gms.a) == 2);  // edge-a directly, edge-c through gm-b

  // gm-b stops and releases its Lease: edge-c's stream ends, its next dial of its configured
  // address lands on gm-a, now the only replica, which serves it directly.
  auto code = gms.b.process->Stop(absl::Seconds(15));
  REQUIRE(code.ok());
  CHECK(*code == 0);
  CHECK(WaitFor([&] { return ShardReplicas(gms.a) == 1; }, absl::Seconds(10), kPoll));
  AppendLines(data_c + "/c.txt", 8, 9);
  CHECK(cluster.WaitSamples("dc", 9, absl::Seconds(30)));
  CHECK(WaitFor([&] { return lc_c.Synced() && LinkServer(lc_c) == gms.address_a; },
                absl::Seconds(30), kPoll));
  CHECK(Moved(gms.a) == 0);

  // gm-b comes back: gm-a ends edge-c's stream with gm-b's address, and edge-c is relayed
  // through gm-b again; edge-a stays where it is.
  gms.b = cluster.LaunchGm("gm-b", gms.port_b, args);
  AwaitStandby(gms.b);
  CHECK(WaitFor([&] { return LinkServer(lc_c) == gms.address_b && RelayedNow(gms.b) == 1; },
                absl::Seconds(30), kPoll));
  CHECK(Moved(gms.a) == 1);
  AppendLines(data_c + "/c.txt", 10, 12);
  CHECK(cluster.WaitSamples("dc", 12, absl::Seconds(30)));
  AppendLines(data_a + "/a.txt", 6, 8);
  CHECK(cluster.WaitSamples("da", 8, absl::Seconds(30)));
  CHECK(LinkServer(lc_a) == gms.address_a);
  CHECK(Moved(gms.b) == 0);
}

}  // namespace
}  // namespace nereid
