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
//     address) lands there, and counting goes on; a restarted replica stays the standby.

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
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

double ConnectedNodes(const GmProcess& gm) {
  return testing::MetricValue(gm.Metrics(), "nereid_edgehub_connected_nodes");
}

TEST_CASE("without the relay, a node given the standby's address is sent to the leader, and "
          "follows the Lease when the leader stops",
          "[integration][ha]") {
  EdgeCluster cluster(testing::BuiltEdgeBinaries(), "gm-replicas-");
  const std::string data = cluster.dir().File("root-edge-a/data");
  std::filesystem::create_directories(data);
  AppendLines(data + "/a.txt", 1, 10);

  const int port_a = testing::FreePort();
  const int port_b = testing::FreePort();
  const std::string address_a = absl::StrCat("127.0.0.1:", port_a);
  const std::string address_b = absl::StrCat("127.0.0.1:", port_b);
  // A bare host: the replica adds the port of --listen.
  GmProcess a = cluster.LaunchGm("gm-a", port_a, {"--edge-advertise-address", "127.0.0.1", "--edge-relay=false"});
  REQUIRE(WaitFor([&] { return a.Ready(); }, absl::Seconds(20), kPoll));
  GmProcess b = cluster.LaunchGm("gm-b", port_b, {"--edge-advertise-address", "127.0.0.1", "--edge-relay=false"});
  REQUIRE(WaitFor([&] { return testing::HttpGet(b.http_port, "/healthz").status == 200; },
                  absl::Seconds(20), kPoll));
  CHECK_FALSE(b.Ready());
  CHECK(LeaseEdgeAddress(cluster) == address_a);

  const testing::CertSet& certs = testing::TestCerts();
  Lc lc = cluster.StartLc("edge-a", certs.NodeCert("edge-a"), certs.NodeKey("edge-a"), "", {},
                          {"--gm", address_b});
  cluster.Kubectl({"apply", "-f", "-"}, DatasetYaml("da", "edge-a", "/data/a.txt"));
  REQUIRE(cluster.WaitSamples("da", 10, absl::Seconds(30)));
  CHECK(LinkServer(lc) == address_a);
  CHECK(lc.LinkCounter("redirects") >= 1);
  CHECK(Redirected(b) >= 1);
  CHECK(a.DatasetReports("accepted") >= 1);

  // The leader stops and releases the Lease; the standby leads, and the node, whose stream
  // ended, dials its configured address again and lands there.
  auto code = a.process->Stop(absl::Seconds(15));
  REQUIRE(code.ok());
  CHECK(*code == 0);
  REQUIRE(WaitFor([&] { return b.Ready(); }, absl::Seconds(20), kPoll));
  CHECK(WaitFor([&] { return LeaseEdgeAddress(cluster) == address_b; }, absl::Seconds(10),
                kPoll));
  AppendLines(data + "/a.txt", 11, 15);
  CHECK(cluster.WaitSamples("da", 15, absl::Seconds(30)));
  CHECK(WaitFor([&] { return lc.Synced() && LinkServer(lc) == address_b; }, absl::Seconds(30),
                kPoll));
  CHECK(b.DatasetReports("accepted") >= 1);

  // gm-a comes back as the standby: the node stays where it is.
  a = cluster.LaunchGm("gm-a", port_a, {"--edge-advertise-address", "127.0.0.1", "--edge-relay=false"});
  REQUIRE(WaitFor([&] { return testing::HttpGet(a.http_port, "/healthz").status == 200; },
                  absl::Seconds(20), kPoll));
  AppendLines(data + "/a.txt", 16, 18);
  CHECK(cluster.WaitSamples("da", 18, absl::Seconds(30)));
  CHECK(LinkServer(lc) == address_b);
  CHECK_FALSE(a.Ready());
  CHECK(LeaseEdgeAddress(cluster) == address_b);
}

TEST_CASE("a node given the standby's address is relayed to the leader, and is served by the "
          "standby itself once it leads",
          "[integration][ha]") {
  EdgeCluster cluster(testing::BuiltEdgeBinaries(), "gm-relay-");
  const std::string data = cluster.dir().File("root-edge-a/data");
  std::filesystem::create_directories(data);
  AppendLines(data + "/a.txt", 1, 10);

  const int port_a = testing::FreePort();
  const int port_b = testing::FreePort();
  const std::string address_b = absl::StrCat("127.0.0.1:", port_b);
  GmProcess a = cluster.LaunchGm("gm-a", port_a, {"--edge-advertise-address", "127.0.0.1"});
  REQUIRE(WaitFor([&] { return a.Ready(); }, absl::Seconds(20), kPoll));
  GmProcess b = cluster.LaunchGm("gm-b", port_b, {"--edge-advertise-address", "127.0.0.1"});
  REQUIRE(WaitFor([&] { return testing::HttpGet(b.http_port, "/healthz").status == 200; },
                  absl::Seconds(20), kPoll));
  CHECK_FALSE(b.Ready());

  const testing::CertSet& certs = testing::TestCerts();
  Lc lc = cluster.StartLc("edge-a", certs.NodeCert("edge-a"), certs.NodeKey("edge-a"), "", {},
                          {"--gm", address_b});
  cluster.Kubectl({"apply", "-f", "-"}, DatasetYaml("da", "edge-a", "/data/a.txt"));
  REQUIRE(cluster.WaitSamples("da", 10, absl::Seconds(30)));
  // The node's connection is the standby's; its stream, state and reports are the leader's.
  CHECK(LinkServer(lc) == address_b);
  CHECK(lc.Synced());
  CHECK(lc.LinkCounter("redirects") == 0);
  CHECK(Redirected(b) == 0);
  CHECK(RelayedNow(b) == 1);
  CHECK(ConnectedNodes(a) == 1);
  CHECK(ConnectedNodes(b) == 0);
  CHECK(a.DatasetReports("accepted") >= 1);
  AppendLines(data + "/a.txt", 11, 12);
  CHECK(cluster.WaitSamples("da", 12, absl::Seconds(30)));

  // The leader stops: the relayed stream ends with it, the standby leads, and the node's next
  // dial of the same address is served there directly.
  auto code = a.process->Stop(absl::Seconds(15));
  REQUIRE(code.ok());
  CHECK(*code == 0);
  REQUIRE(WaitFor([&] { return b.Ready(); }, absl::Seconds(20), kPoll));
  AppendLines(data + "/a.txt", 13, 15);
  CHECK(cluster.WaitSamples("da", 15, absl::Seconds(30)));
  CHECK(WaitFor([&] { return ConnectedNodes(b) == 1 && RelayedNow(b) == 0; }, absl::Seconds(30),
                kPoll));
  CHECK(LinkServer(lc) == address_b);
  CHECK(b.DatasetReports("accepted") >= 1);

  // gm-a comes back as the standby and relays a second node to gm-b.
  a = cluster.LaunchGm("gm-a", port_a, {"--edge-advertise-address", "127.0.0.1"});
  REQUIRE(WaitFor([&] { return testing::HttpGet(a.http_port, "/healthz").status == 200; },
                  absl::Seconds(20), kPoll));
  const std::string data_b = cluster.dir().File("root-edge-b/data");
  std::filesystem::create_directories(data_b);
  AppendLines(data_b + "/b.txt", 1, 4);
  Lc lc_b = cluster.StartLc("edge-b", certs.NodeCert("edge-b"), certs.NodeKey("edge-b"), "", {},
                            {"--gm", absl::StrCat("127.0.0.1:", port_a)});
  cluster.Kubectl({"apply", "-f", "-"}, DatasetYaml("db", "edge-b", "/data/b.txt"));
  CHECK(cluster.WaitSamples("db", 4, absl::Seconds(30)));
  CHECK(WaitFor([&] { return RelayedNow(a) == 1 && ConnectedNodes(b) == 2; }, absl::Seconds(30),
                kPoll));
  CHECK_FALSE(a.Ready());
}

}  // namespace
}  // namespace nereid
