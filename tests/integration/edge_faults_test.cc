// Integration, fault injection on the GM ↔ LC link: the real `globalmanager` and
// `localcontroller` binaries with a FaultProxy (tests/support/fault_proxy.h) between them, driven
// by kubectl against devapiserver:
//   - the link blackholed for longer than the keepalive while a dataset grows on the node and
//     Datasets are added and deleted in the cloud: both sides notice the dead link, the LC keeps
//     counting into its outbox; restored, both sides converge (`kubectl get` shows the node's
//     count, the node holds exactly the cloud's objects), the outbox drains, and the status is
//     not rewritten once it is right;
//   - the link reset every 700 ms during a burst of reports: every report lands and the final
//     count is the file's;
//   - the GM leader SIGKILLed during a burst of reports with a standby running: the standby takes
//     the Lease, the node follows the leader through the proxy (standing in for the Service, whose
//     endpoints are the ready replica), every count lands, none is written twice or goes back;
//   - the GM's API server unavailable (connections reset, new ones refused) while the node's
//     count grows and a Dataset is created: the GM dials back at a bounded rate, the LC keeps the
//     report, and once the API server is back the count lands and the new Dataset is counted.

#include <signal.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"
#include "tests/common/net/test_certs.h"
#include "tests/integration/edge_cluster.h"
#include "tests/integration/loopback_helpers.h"
#include "tests/support/fault_proxy.h"

namespace nereid {
namespace {

using Json = nlohmann::json;
using testing::AppendLines;
using testing::DatasetYaml;
using testing::EdgeCluster;
using testing::FaultProxy;
using testing::Lc;
using testing::Subprocess;
using testing::WaitFor;

constexpr absl::Duration kPoll = testing::kEdgePoll;

// Pings every second on both sides, so a silent link is found dead within about 2 s.
const char kFastGmKeepalive[] = "edgeKeepalive: {time: 1s, timeout: 1s, minClientPingInterval: 500ms}\n";

// An LC for edge-a that reaches the GM through `proxy`, with a 1 s + 1 s keepalive.
Lc StartLcThrough(EdgeCluster& cluster, const FaultProxy& proxy) {
  const testing::CertSet& certs = testing::TestCerts();
  return cluster.StartLc("edge-a", certs.NodeCert("edge-a"), certs.NodeKey("edge-a"), "", {},
                         {"--gm", absl::StrCat("127.0.0.1:", proxy.port()), "--keepalive-time",
                          "1s", "--keepalive-timeout", "1s"});
}

std::string LinkState(const Lc& lc) {
  Json status = lc.Status();
  return status.is_object() ? status["cloudLink"].value("state", "") : "";
}

double ConnectedNodes(const EdgeCluster& cluster) {
  return testing::MetricValue(cluster.GmMetrics(), "nereid_edgehub_connected_nodes");
}

std::string DatasetResourceVersion(EdgeCluster& cluster, const std::string& name) {
  Json d = Json::parse(cluster.Kubectl({"get", "dataset", name, "-o", "json"}), nullptr, false);
  return d.is_object() ? d["metadata"].value("resourceVersion", "") : "";
}

TEST_CASE("a blackholed edge link converges once restored, nothing lost or rewritten",
          "[integration][faults]") {
  EdgeCluster cluster(testing::BuiltEdgeBinaries(), "edge-faults-", kFastGmKeepalive);
  const std::string data = cluster.dir().File("root-edge-a/data");
  std::filesystem::create_directories(data);
  AppendLines(data + "/a.txt", 1, 10);
  AppendLines(data + "/b.txt", 1, 7);
  AppendLines(data + "/c.txt", 1, 5);
  cluster.StartGm();
  auto proxy = FaultProxy::Start(cluster.gm_port());
  REQUIRE(proxy.ok());
  Lc lc = StartLcThrough(cluster, **proxy);
  REQUIRE(WaitFor([&] { return lc.Synced(); }, absl::Seconds(20), kPoll));
  cluster.Kubectl({"apply", "-f", "-"}, DatasetYaml("da", "edge-a", "/data/a.txt") + "---\n" +
                                            DatasetYaml("dc", "edge-a", "/data/c.txt"));
  REQUIRE(cluster.WaitSamples("da", 10, absl::Seconds(30)));
  REQUIRE(cluster.WaitSamples("dc", 5, absl::Seconds(30)));

  (*proxy)->SetBlackhole(true);
  // Both keepalives notice: the LC leaves "connected", the GM drops the node.
  CHECK(WaitFor([&] { return LinkState(lc) != "connected"; }, absl::Seconds(20), kPoll));
  CHECK(WaitFor([&] { return ConnectedNodes(cluster) == 0; }, absl::Seconds(20), kPoll));

  // The node goes on counting into its outbox; the cloud changes what the node should hold.
  AppendLines(data + "/a.txt", 11, 25);
  CHECK(WaitFor([&] { return lc.LocalSamples("da") == 25; }, absl::Seconds(20), kPoll));
  CHECK(WaitFor([&] { return lc.OutboxDepth() > 0; }, absl::Seconds(10), kPoll));
  cluster.Kubectl({"apply", "-f", "-"}, DatasetYaml("db", "edge-a", "/data/b.txt"));
  cluster.Kubectl({"delete", "dataset", "dc"});
  CHECK(cluster.Samples("da") == 10);  // the cloud has not heard yet

  (*proxy)->SetBlackhole(false);
  CHECK(WaitFor([&] { return lc.Synced(); }, absl::Seconds(30), kPoll));
  CHECK(cluster.WaitSamples("da", 25, absl::Seconds(30)));
  CHECK(cluster.WaitSamples("db", 7, absl::Seconds(30)));
  CHECK(WaitFor([&] { return !lc.Get("/api/v1/datasets/default/dc").is_object(); },
                absl::Seconds(20), kPoll));
  CHECK(WaitFor([&] { return lc.OutboxDepth() == 0; }, absl::Seconds(20), kPoll));
  CHECK(ConnectedNodes(cluster) == 1);
  CHECK(cluster.GmDatasetReports("rejected") == 0);

  // Converged: the LC rescans every second, and a count that did not change is not written again.
  const std::string settled = DatasetResourceVersion(cluster, "da");
  REQUIRE_FALSE(settled.empty());
  CHECK_FALSE(WaitFor([&] { return DatasetResourceVersion(cluster, "da") != settled; },
                      absl::Seconds(4), kPoll));
}

TEST_CASE("reports keep landing while the edge link is reset again and again",
          "[integration][faults]") {
  EdgeCluster cluster(testing::BuiltEdgeBinaries(), "edge-resets-", kFastGmKeepalive);
  const std::string file = cluster.dir().File("root-edge-a/data/a.txt");
  std::filesystem::create_directories(cluster.dir().File("root-edge-a/data"));
  AppendLines(file, 1, 1);
  cluster.StartGm();
  auto proxy = FaultProxy::Start(cluster.gm_port());
  REQUIRE(proxy.ok());
  Lc lc = StartLcThrough(cluster, **proxy);
  REQUIRE(WaitFor([&] { return lc.Synced(); }, absl::Seconds(20), kPoll));
  cluster.Kubectl({"apply", "-f", "-"}, DatasetYaml("da", "edge-a", "/data/a.txt"));
  REQUIRE(cluster.WaitSamples("da", 1, absl::Seconds(30)));

  // A burst: a line every 100 ms for 4 s (the LC rescans each second), the link reset every
  // 700 ms meanwhile.
  constexpr int kLines = 40;
  std::thread writer([&] {  // no Catch macros off the test thread
    for (int i = 2; i <= kLines + 1; ++i) {
      std::ofstream(file, std::ios::app) << "sample " << i << "\n";
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  const int64_t accepted_before = (*proxy)->connections_accepted();
  for (int reset = 0; reset < 6; ++reset) {
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    (*proxy)->ResetAll();
  }
  writer.join();
  CHECK((*proxy)->connections_accepted() > accepted_before);  // the LC did redial

  CHECK(cluster.WaitSamples("da", kLines + 1, absl::Seconds(60)));
  CHECK(WaitFor([&] { return lc.Synced() && lc.OutboxDepth() == 0; }, absl::Seconds(30), kPoll));
  CHECK(lc.LocalSamples("da") == kLines + 1);
  CHECK(cluster.GmDatasetReports("rejected") == 0);
}

// Dataset status changes as a watch sees them: "name count resourceVersion" per MODIFIED event.
std::vector<std::vector<std::string>> StatusChanges(const std::string& watch_output,
                                                    const std::string& name) {
  std::vector<std::vector<std::string>> changes;
  for (absl::string_view line : absl::StrSplit(watch_output, '\n', absl::SkipEmpty())) {
    std::vector<std::string> fields = absl::StrSplit(line, ' ');
    if (fields.size() == 4 && fields[0] == "MODIFIED" && fields[1] == name && !fields[2].empty()) {
      changes.push_back({fields[2], fields[3]});
    }
  }
  return changes;
}

TEST_CASE("the GM leader SIGKILLed during a burst of reports: the standby leads, nothing is lost, "
          "doubled or reordered",
          "[integration][faults]") {
  EdgeCluster cluster(testing::BuiltEdgeBinaries(), "gm-failover-", kFastGmKeepalive);
  const std::string data = cluster.dir().File("root-edge-a/data");
  std::filesystem::create_directories(data);
  AppendLines(data + "/a.txt", 1, 10);
  AppendLines(data + "/b.txt", 1, 7);
  testing::GmProcess leader = cluster.LaunchGm("gm-a", testing::FreePort());
  REQUIRE(WaitFor([&] { return leader.Ready(); }, absl::Seconds(20), kPoll));
  testing::GmProcess standby = cluster.LaunchGm("gm-b", testing::FreePort());
  // The standby serves its probes but is not ready (so not behind the Service) while gm-a leads.
  REQUIRE(WaitFor([&] { return testing::HttpGet(standby.http_port, "/healthz").status == 200; },
                  absl::Seconds(20), kPoll));
  CHECK_FALSE(standby.Ready());

  // The proxy is the Service: it sends nodes to the ready replica.
  auto service = FaultProxy::Start(leader.port);
  REQUIRE(service.ok());
  Lc lc = StartLcThrough(cluster, **service);
  REQUIRE(WaitFor([&] { return lc.Synced(); }, absl::Seconds(20), kPoll));
  Subprocess::Options watch;
  watch.argv = {cluster.bins().kubectl, "--kubeconfig", cluster.kubeconfig(), "get", "datasets",
                "--watch", "--output-watch-events", "-o",
                "jsonpath={.type} {.object.metadata.name} {.object.status.numberOfSamples} "
                "{.object.metadata.resourceVersion}{\"\\n\"}"};
  auto watcher = Subprocess::Start(std::move(watch));
  REQUIRE(watcher.ok());
  cluster.Kubectl({"apply", "-f", "-"}, DatasetYaml("da", "edge-a", "/data/a.txt"));
  REQUIRE(cluster.WaitSamples("da", 10, absl::Seconds(30)));

  // A burst: a line every 100 ms for 4 s (the LC rescans each second); the leader dies in it.
  constexpr int kLines = 40;
  std::thread writer([&] {  // no Catch macros off the test thread
    for (int i = 11; i <= 10 + kLines; ++i) {
      std::ofstream(data + "/a.txt", std::ios::app) << "sample " << i << "\n";
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  const double accepted_by_leader = leader.DatasetReports("accepted");
  REQUIRE(kill(leader.process->pid(), SIGKILL) == 0);
  const absl::Time killed_at = absl::Now();
  // While no replica leads, the cloud changes too.
  cluster.Kubectl({"apply", "-f", "-"}, DatasetYaml("db", "edge-a", "/data/b.txt"));

  // The Endpoints follow readiness: once the standby leads, the Service sends nodes to it.
  REQUIRE(WaitFor([&] { return standby.Ready(); }, absl::Seconds(30), kPoll));
  const double takeover_seconds = absl::ToDoubleSeconds(absl::Now() - killed_at);
  (*service)->SetUpstreamPort(standby.port);
  writer.join();
  INFO("the standby was ready " << takeover_seconds << " s after the leader was killed");
  CHECK(takeover_seconds < 15);  // a 3 s Lease, renewed every 500 ms
  CHECK(accepted_by_leader >= 1);

  CHECK(cluster.WaitSamples("da", 10 + kLines, absl::Seconds(60)));
  CHECK(cluster.WaitSamples("db", 7, absl::Seconds(30)));
  CHECK(WaitFor([&] { return lc.Synced() && lc.OutboxDepth() == 0; }, absl::Seconds(30), kPoll));
  CHECK(standby.DatasetReports("accepted") >= 1);
  CHECK(standby.DatasetReports("rejected") == 0);
  CHECK(cluster.Kubectl({"get", "lease", "-n", "default", "nereid-gm", "-o",
                         "jsonpath={.spec.holderIdentity}"}) == "gm-b");

  // Every status write the watch saw for "da": each a new, larger count (a report applied twice
  // would be a write without change, which the API server drops; one applied late would go back).
  REQUIRE(WaitFor([&] { return absl::StrContains(watcher.value()->Stdout(),
                                                 absl::StrCat("MODIFIED da ", 10 + kLines, " ")); },
                  absl::Seconds(10), kPoll));
  (void)(*watcher)->Stop(absl::Seconds(5));
  const auto changes = StatusChanges((*watcher)->Stdout(), "da");
  INFO("status writes of da: " << changes.size());
  REQUIRE(changes.size() >= 2);
  int64_t previous = 0;
  for (const auto& change : changes) {
    int64_t count = 0;
    REQUIRE(absl::SimpleAtoi(change[0], &count));
    CHECK(count > previous);
    previous = count;
  }
  CHECK(previous == 10 + kLines);
}

// A copy of `kubeconfig` whose server is 127.0.0.1:`port` instead; `api_port` gets the original
// port.
std::string KubeconfigThrough(const EdgeCluster& cluster, int port, int* api_port) {
  std::ifstream in(cluster.kubeconfig());
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string host = "127.0.0.1:";
  const size_t at = text.find(host);
  REQUIRE(at != std::string::npos);
  const size_t digits = at + host.size();
  const size_t end = text.find_first_not_of("0123456789", digits);
  REQUIRE(absl::SimpleAtoi(text.substr(digits, end - digits), api_port));
  text.replace(digits, end - digits, std::to_string(port));
  return *cluster.dir().Write("kubeconfig-through-proxy", text);
}

TEST_CASE("the GM rides out an API server outage without a hot loop and converges after",
          "[integration][faults]") {
  EdgeCluster cluster(testing::BuiltEdgeBinaries(), "api-outage-");
  const std::string data = cluster.dir().File("root-edge-a/data");
  std::filesystem::create_directories(data);
  AppendLines(data + "/a.txt", 1, 10);
  AppendLines(data + "/b.txt", 1, 7);
  auto proxy = FaultProxy::Start(0);
  REQUIRE(proxy.ok());
  int api_port = 0;
  const std::string proxied = KubeconfigThrough(cluster, (*proxy)->port(), &api_port);
  (*proxy)->SetUpstreamPort(api_port);
  // One replica without leader election: with it, an outage longer than the renew deadline ends
  // the process by design (client-go's choice; the kubelet restarts it), which is not this case.
  cluster.StartGm({"--kubeconfig", proxied, "--leader-elect=false"});
  Lc lc = cluster.StartNodeLc("edge-a");
  REQUIRE(WaitFor([&] { return lc.Synced(); }, absl::Seconds(20), kPoll));
  cluster.Kubectl({"apply", "-f", "-"}, DatasetYaml("da", "edge-a", "/data/a.txt"));
  REQUIRE(cluster.WaitSamples("da", 10, absl::Seconds(30)));

  // The GM's API server goes away (kubectl still reaches it directly): open connections, watches
  // included, are reset and new ones refused.
  (*proxy)->SetRefuse(true);
  (*proxy)->ResetAll();
  const int64_t dialled_before = (*proxy)->connections_accepted();
  const absl::Time down_since = absl::Now();
  AppendLines(data + "/a.txt", 11, 20);
  cluster.Kubectl({"apply", "-f", "-"}, DatasetYaml("db", "edge-a", "/data/b.txt"));
  CHECK(WaitFor([&] { return lc.LocalSamples("da") == 20; }, absl::Seconds(20), kPoll));
  // The report cannot land: the LC keeps it (RETRY), the API still says 10.
  CHECK(WaitFor([&] { return lc.OutboxDepth() > 0; }, absl::Seconds(20), kPoll));
  CHECK_FALSE(WaitFor([&] { return cluster.Samples("da") != 10; }, absl::Seconds(8), kPoll));
  const double down_seconds = absl::ToDoubleSeconds(absl::Now() - down_since);
  const double dial_rate =
      static_cast<double>((*proxy)->connections_accepted() - dialled_before) / down_seconds;
  // Every informer and the report writers back off: a handful of dials a second, not a hot loop.
  INFO("GM dials to the unavailable API server: " << dial_rate << "/s over " << down_seconds
                                                  << " s");
  CHECK(dial_rate < 20);

  (*proxy)->SetRefuse(false);
  CHECK(cluster.WaitSamples("da", 20, absl::Seconds(60)));
  CHECK(cluster.WaitSamples("db", 7, absl::Seconds(60)));  // seen by the relist after the outage
  CHECK(WaitFor([&] { return lc.OutboxDepth() == 0; }, absl::Seconds(30), kPoll));
  CHECK(testing::HttpGet(cluster.gm_http_port(), "/healthz").status == 200);
}

}  // namespace
}  // namespace nereid
