// Debian's real Prometheus (/usr/bin/prometheus on 127.0.0.1, its own storage in a temp dir, 1 s
// scrape and evaluation) scrapes a real GM and two real LCs (devapiserver, mTLS) with Nereid's
// rules loaded:
//   - every target is up, and `promtool check metrics` accepts each live scrape (names, units,
//     suffixes as Prometheus recommends);
//   - every metric name in the rules and the dashboards is one the binaries export (from the live
//     scrapes), so they cannot drift from the code;
//   - a Dataset that fails on a node shows as NereidDatasetFailing (pending) naming the node and
//     the Dataset, through the LC's metrics listener;
//   - one LC is SIGKILLed and NereidEdgeNodeDisconnected (its threshold and `for:` shortened for
//     the test, the expression otherwise as shipped) fires for that node, and only that node.

#include <csignal>

#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tests/integration/edge_cluster.h"
#include "tests/monitoring/monitoring_files.h"

namespace nereid::testing {
namespace {

using Json = nlohmann::json;

constexpr absl::Duration kWait = absl::Seconds(30);

// The shipped rules, with NereidEdgeNodeDisconnected firing after 2 s instead of 10 minutes.
std::string TestRules() {
  Json spec = RuleFileSpec();
  bool changed = false;
  for (Json& group : spec["groups"]) {
    for (Json& rule : group["rules"]) {
      if (rule.value("alert", "") != "NereidEdgeNodeDisconnected") continue;
      std::string expr = rule["expr"];
      const size_t at = expr.find("> 600");
      REQUIRE(at != std::string::npos);
      rule["expr"] = expr.replace(at, 5, "> 2");
      rule["for"] = "1s";
      changed = true;
    }
  }
  REQUIRE(changed);
  return spec.dump(2);
}

std::string PrometheusConfig(int gm_port, int lc_a_port, int lc_b_port) {
  return absl::StrCat(
      "global: {scrape_interval: 1s, scrape_timeout: 900ms, evaluation_interval: 1s}\n"
      "rule_files: [rules.yaml]\n"
      "scrape_configs:\n"
      "  - job_name: nereid-gm\n"
      "    static_configs: [{targets: ['127.0.0.1:", gm_port, "']}]\n"
      "  - job_name: nereid-lc\n"
      "    static_configs:\n"
      "      - {targets: ['127.0.0.1:", lc_a_port, "'], labels: {node: edge-a}}\n"
      "      - {targets: ['127.0.0.1:", lc_b_port, "'], labels: {node: edge-b}}\n");
}

class Prometheus {
 public:
  Prometheus(const TempDir& dir, const std::string& config, const std::string& rules)
      : port_(FreePort()) {
    REQUIRE(dir.Write("prometheus.yml", config).ok());
    REQUIRE(dir.Write("rules.yaml", rules).ok());
    Subprocess::Options options;
    options.argv = {NEREID_PROMETHEUS,
                    "--config.file=" + dir.File("prometheus.yml"),
                    "--storage.tsdb.path=" + dir.File("prometheus-data"),
                    absl::StrCat("--web.listen-address=127.0.0.1:", port_),
                    "--log.level=warn"};
    options.capture_stderr = true;
    auto started = Subprocess::Start(std::move(options));
    REQUIRE(started.ok());
    process_ = *std::move(started);
  }
  ~Prometheus() {
    DumpOnFailure("prometheus", process_.get(), kEdgeStderrTail);
    if (process_ != nullptr) (void)process_->Stop(absl::Seconds(10));
  }

  // The `data` of a GET on its HTTP API; null while it does not answer.
  Json Api(const std::string& path) const {
    HttpReply reply = HttpGet(port_, path);
    if (reply.status != 200) return nullptr;
    Json body = Json::parse(reply.body, nullptr, false);
    return body.is_object() && body.value("status", "") == "success" ? body["data"] : Json();
  }

  // Health of every active target by job and node ("nereid-lc/edge-a" -> "up").
  std::map<std::string, std::string> Targets() const {
    std::map<std::string, std::string> out;
    Json data = Api("/api/v1/targets?state=active");
    if (!data.is_object()) return out;
    for (const Json& target : data["activeTargets"]) {
      const Json& labels = target["labels"];
      out[labels.value("job", "") + "/" + labels.value("node", "")] = target.value("health", "");
    }
    return out;
  }

  // Active alerts named `alert` in `state` (pending|firing), as their labels.
  std::vector<Json> Alerts(const std::string& alert, const std::string& state) const {
    std::vector<Json> out;
    Json data = Api("/api/v1/alerts");
    if (!data.is_object()) return out;
    for (const Json& a : data["alerts"]) {
      if (a["labels"].value("alertname", "") == alert && a.value("state", "") == state) {
        out.push_back(a["labels"]);
      }
    }
    return out;
  }

  std::string Stderr() const { return process_->Stderr(); }

 private:
  const int port_;
  std::unique_ptr<Subprocess> process_;
};

// Every metric name a scrape names, samples (with _bucket, _sum, _count) and # TYPE lines alike.
void CollectNames(const std::string& page, std::set<std::string>& names) {
  for (absl::string_view line : absl::StrSplit(page, '\n')) {
    if (absl::StartsWith(line, "# TYPE ")) {
      std::vector<absl::string_view> words = absl::StrSplit(line, ' ');
      if (words.size() >= 3) names.insert(std::string(words[2]));
      continue;
    }
    if (line.empty() || line[0] == '#') continue;
    names.insert(std::string(line.substr(0, line.find_first_of("{ "))));
  }
}

void CheckMetricsWithPromtool(const std::string& what, const std::string& page) {
  auto result = RunCommand({NEREID_PROMTOOL, "check", "metrics"}, absl::Seconds(30), {}, page);
  REQUIRE(result.ok());
  INFO(what << ": promtool check metrics says:\n" << result->out << result->err);
  CHECK(result->exit_code == 0);
  CHECK(result->out.empty());
  CHECK(result->err.empty());
}

TEST_CASE("Prometheus scrapes a real GM and two LCs; a killed LC fires the disconnected-node "
          "alert") {
  EdgeCluster cluster(BuiltEdgeBinaries(), "prometheus-it-");
  cluster.StartGm();
  const CertSet& certs = TestCerts();
  const int metrics_a = FreePort();
  const int metrics_b = FreePort();
  Lc lc_a = cluster.StartLc("edge-a", certs.NodeCert("edge-a"), certs.NodeKey("edge-a"), "", {},
                            {"--metrics-listen", absl::StrCat("127.0.0.1:", metrics_a)});
  Lc lc_b = cluster.StartLc("edge-b", certs.NodeCert("edge-b"), certs.NodeKey("edge-b"), "", {},
                            {"--metrics-listen", absl::StrCat("127.0.0.1:", metrics_b)});
  REQUIRE(WaitFor([&] { return lc_a.Synced() && lc_b.Synced(); }, kWait, kEdgePoll));
  // A Dataset whose file does not exist on edge-a.
  cluster.Kubectl({"apply", "-f", "-"}, DatasetYaml("broken", "edge-a", "/data/missing.txt"));

  // The metrics listener serves /metrics and nothing else: the REST API is not behind it.
  CHECK(HttpGet(metrics_a, "/api/v1/status").status == 404);
  REQUIRE(HttpGet(metrics_a, "/metrics").status == 200);

  Prometheus prometheus(cluster.dir(),
                        PrometheusConfig(cluster.gm_http_port(), metrics_a, metrics_b),
                        TestRules());
  const std::map<std::string, std::string> all_up = {
      {"nereid-gm/", "up"}, {"nereid-lc/edge-a", "up"}, {"nereid-lc/edge-b", "up"}};
  std::map<std::string, std::string> targets;
  const bool up = WaitFor([&] { return (targets = prometheus.Targets()) == all_up; }, kWait,
                          kEdgePoll);
  INFO("targets: " << Json(targets).dump() << "\nprometheus stderr:\n" << prometheus.Stderr());
  REQUIRE(up);

  // The failing Dataset, named with its node, through the LC's listener and the rule's labels.
  std::vector<Json> failing;
  REQUIRE(WaitFor(
      [&] { return !(failing = prometheus.Alerts("NereidDatasetFailing", "pending")).empty(); },
      kWait, kEdgePoll));
  CHECK(failing[0].value("node", "") == "edge-a");
  CHECK(failing[0].value("name", "") == "broken");
  CHECK(failing[0].value("reason", "") == "PathNotFound");
  CHECK(prometheus.Alerts("NereidEdgeNodeDisconnected", "firing").empty());
  CHECK(prometheus.Alerts("NereidEdgeNodeDisconnected", "pending").empty());

  // Live scrapes: promtool's lint, and the names they carry.
  std::set<std::string> exported;
  const std::string lc_b_page = HttpGet(metrics_b, "/metrics").body;
  CheckMetricsWithPromtool("LC edge-b", lc_b_page);
  CollectNames(lc_b_page, exported);

  REQUIRE(kill(lc_b.process->pid(), SIGKILL) == 0);
  std::vector<Json> disconnected;
  const bool fired = WaitFor(
      [&] {
        return !(disconnected = prometheus.Alerts("NereidEdgeNodeDisconnected", "firing")).empty();
      },
      kWait, kEdgePoll);
  INFO("prometheus stderr:\n" << prometheus.Stderr());
  REQUIRE(fired);
  REQUIRE(disconnected.size() == 1);
  CHECK(disconnected[0].value("node", "") == "edge-b");
  CHECK(disconnected[0].value("severity", "") == "warning");

  // After the kill the GM also exports the disconnected node's series.
  const std::string gm_page = cluster.GmMetrics();
  CheckMetricsWithPromtool("GM", gm_page);
  CollectNames(gm_page, exported);
  CHECK(exported.count("nereid_edgehub_node_disconnected_timestamp_seconds") == 1);
  const std::string lc_a_page = HttpGet(metrics_a, "/metrics").body;
  CheckMetricsWithPromtool("LC edge-a", lc_a_page);
  CollectNames(lc_a_page, exported);

  for (const Expression& expression : AllExpressions()) {
    for (const std::string& name : MetricNames(expression.promql)) {
      INFO(expression.where << ": " << expression.promql);
      CHECK(exported.count(name) == 1);
    }
  }
}

}  // namespace
}  // namespace nereid::testing
