// Integration: the fleet in kubectl. devapiserver + the `globalmanager` binary + two
// `localcontroller` binaries (mTLS), driven by the real kubectl: `kubectl get en` shows each
// connected node within seconds with its LC's release and what it holds; a failing dataset is
// named; a SIGKILLed LC turns its node disconnected; `kubectl describe en` shows the Events; the
// EdgeNode goes with its Node. Also the version reporting: nereid_build_info on both /metrics, the
// GM's gauge of connected LC versions.

#include <catch2/catch.hpp>
#include <csignal>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tests/integration/edge_cluster.h"
#include "tests/integration/loopback_helpers.h"
#include "tests/support/subprocess.h"

namespace nereid {
namespace {

using testing::Contains;
using testing::Lc;
using testing::MetricValue;
using Json = nlohmann::json;

constexpr absl::Duration kPoll = absl::Milliseconds(100);

testing::EdgeBinaries Binaries() {
  return {NEREID_DEVAPISERVER_BIN, NEREID_GM_BIN, NEREID_LC_BIN, NEREID_KUBECTL,
          NEREID_SOURCE_DIR};
}

Json EdgeNode(testing::EdgeCluster& cluster, const std::string& node) {
  const std::string out = cluster.Kubectl({"get", "en", "-o", "json"});
  const Json list = Json::parse(out, nullptr, false);
  if (!list.is_object()) return Json();
  for (const Json& item : list["items"]) {
    if (item["metadata"]["name"] == node) return item;
  }
  return Json();
}

bool Connected(testing::EdgeCluster& cluster, const std::string& node, bool connected) {
  const Json object = EdgeNode(cluster, node);
  return object.is_object() && object["status"].value("connected", !connected) == connected;
}

// Whether `described` (kubectl describe) lists an Event of `type` and `reason`.
bool HasEventLine(const std::string& described, const std::string& type,
                  const std::string& reason) {
  for (absl::string_view line : absl::StrSplit(described, '\n')) {
    const std::vector<std::string> words = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (words.size() >= 2 && words[0] == type && words[1] == reason) return true;
  }
  return false;
}

// The release the LC reports on its own status endpoint ("nereid-lc/<release>").
std::string LcRelease(const Lc& lc) {
  const std::string version = lc.Status().value("version", "");
  return version.substr(version.find('/') + 1);
}

TEST_CASE("kubectl get en shows the fleet: connected nodes, versions, failing objects") {
  testing::EdgeCluster cluster(Binaries(), "edge-nodes");
  for (const char* node : {"edge-a", "edge-b"}) {
    cluster.Kubectl({"apply", "-f", "-"},
                    absl::StrCat("apiVersion: v1\nkind: Node\nmetadata:\n  name: ", node, "\n"));
  }
  cluster.StartGm();
  const absl::Time start = absl::Now();
  Lc a = cluster.StartNodeLc("edge-a");
  Lc b = cluster.StartNodeLc("edge-b");
  REQUIRE(testing::WaitFor(
      [&] { return Connected(cluster, "edge-a", true) && Connected(cluster, "edge-b", true); },
      absl::Seconds(10), kPoll));
  UNSCOPED_INFO("both nodes connected in kubectl after " << absl::Now() - start);

  const std::string release = LcRelease(a);
  REQUIRE_FALSE(release.empty());
  const Json en = EdgeNode(cluster, "edge-a");
  CHECK(en["status"]["lcVersion"] == release);
  CHECK(en["status"]["servedBy"] == "gm-e2e");
  CHECK_FALSE(en["status"].value("lcCommit", "").empty());
  CHECK(en["metadata"]["ownerReferences"][0]["kind"] == "Node");

  // The operator's table: the promised columns, a row per node.
  const std::string table = cluster.Kubectl({"get", "en"});
  INFO(table);
  const std::vector<std::string> header = absl::StrSplit(
      table.substr(0, table.find('\n')), ' ', absl::SkipEmpty());
  CHECK(header == std::vector<std::string>{"NAME", "CONNECTED", "VERSION", "DATASETS", "MODELS",
                                           "WORKERS", "FAILING", "AGE"});
  CHECK(Contains(table, "edge-a"));
  CHECK(Contains(table, "edge-b"));

  SECTION("a failing dataset is counted and named, within seconds") {
    cluster.Kubectl({"apply", "-f", "-"},
                    testing::DatasetYaml("missing", "edge-a", "/data/not-there.txt"));
    REQUIRE(testing::WaitFor(
        [&] {
          const Json node = EdgeNode(cluster, "edge-a");
          return node.is_object() && node["status"].value("failing", 0) == 1;
        },
        absl::Seconds(15), kPoll));
    const Json status = EdgeNode(cluster, "edge-a")["status"];
    CHECK(status["datasets"] == 1);
    CHECK(status["firstFailing"]["kind"] == "Dataset");
    CHECK(status["firstFailing"]["name"] == "missing");
    CHECK_FALSE(status["firstFailing"].value("reason", "").empty());
    CHECK(status["databaseWritable"] == true);
    CHECK(EdgeNode(cluster, "edge-b")["status"]["failing"] == 0);
  }

  SECTION("versions: nereid_build_info on both /metrics, the GM's gauge of connected LCs") {
    const std::string gm_metrics = cluster.GmMetrics();
    CHECK(Contains(gm_metrics, "nereid_build_info{"));
    CHECK(MetricValue(gm_metrics, absl::StrCat("nereid_edgehub_connected_lc_versions{version=\"",
                                               release, "\"}")) == 2);
    const std::string lc_metrics = testing::HttpGet(a.port, "/metrics").body;
    CHECK(Contains(lc_metrics, absl::StrCat("nereid_build_info{commit=\"",
                                            en["status"]["lcCommit"].get<std::string>(),
                                            "\",version=\"", release, "\"} 1")));
    CHECK(Contains(cluster.GmStderr(), absl::StrCat("node edge-a connected (lc ", release)));
  }

  SECTION("a killed LC turns its node disconnected; describe shows the Events") {
    const absl::Time killed = absl::Now();
    REQUIRE(kill(b.process->pid(), SIGKILL) == 0);
    REQUIRE(b.process->Wait(absl::Seconds(10)).ok());
    REQUIRE(testing::WaitFor([&] { return Connected(cluster, "edge-b", false); },
                             absl::Seconds(10), kPoll));
    UNSCOPED_INFO("disconnected in kubectl after " << absl::Now() - killed);
    CHECK(Connected(cluster, "edge-a", true));
    CHECK(MetricValue(cluster.GmMetrics(),
                      absl::StrCat("nereid_edgehub_connected_lc_versions{version=\"", release,
                                   "\"}")) == 1);
    std::string described;
    REQUIRE(testing::WaitFor(
        [&] {
          described = cluster.Kubectl({"describe", "en", "edge-b"});
          return HasEventLine(described, "Warning", "Disconnected") &&
                 HasEventLine(described, "Normal", "Connected");
        },
        absl::Seconds(10), kPoll));
    INFO(described);
    CHECK(Contains(described, "StreamEnded"));

    // Back: connected again.
    b = cluster.StartNodeLc("edge-b");
    REQUIRE(testing::WaitFor([&] { return Connected(cluster, "edge-b", true); },
                             absl::Seconds(10), kPoll));
  }

  SECTION("the EdgeNode goes with its Node") {
    cluster.Kubectl({"delete", "node", "edge-a"});
    REQUIRE(testing::WaitFor([&] { return EdgeNode(cluster, "edge-a").is_null(); },
                             absl::Seconds(10), kPoll));
    CHECK(EdgeNode(cluster, "edge-b").is_object());
  }
}

}  // namespace
}  // namespace nereid
