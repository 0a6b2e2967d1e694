// Integration, end to end: real processes on loopback — devapiserver, the `globalmanager` binary
// and two `localcontroller` binaries with their own node certificates (mTLS), driven by kubectl:
//   - kubectl applies one Dataset per node → both counts appear in `kubectl get datasets`;
//   - lines appended → the count follows;
//   - the GM stopped, a dataset grown and counted while the cloud is away, the GM started again →
//     the count kept in the LC's outbox lands;
//   - an LC SIGKILLed just after its dataset grew (at whatever point of its 1 s scan cycle), the
//     file grown again while it is down, the LC restarted from its database → the count is right
//     (lc_crash_test kills it at chosen points of the scan and report path, with failpoints);
//   - node edge-a's certificate claiming edge-b is refused (by the LC at start, and by the GM for a
//     raw stream that tries anyway), an LC with a certificate from another CA fails the handshake,
//     and neither disturbs the real nodes;
//   - a worker report POSTed to an LC's REST (Sedna's shape) reaches the GM: rejected for good
//     about a service not placed on the node; with the JointInferenceService controller in the
//     GM, a service placed on the node gets its worker's ownerInfo in status.metrics, and a
//     FederatedLearningJob's training worker's round (reported as the SDK does, ownerKind
//     "default") its currentRound, the metrics its aggregation Model's; both workers are the
//     SDK stand-in (sdk_worker.h) that knows only the env the GM gave it.
// Runs in about 10 s.

#include <catch2/catch.hpp>
#include <csignal>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "tests/common/net/test_certs.h"
#include "tests/globalmanager/edgehub/test_node.h"
#include "tests/integration/edge_cluster.h"
#include "tests/integration/loopback_helpers.h"
#include "tests/integration/sdk_worker.h"
#include "tests/support/devapiserver_process.h"
#include "tests/support/subprocess.h"

namespace nereid {
namespace {

using Json = nlohmann::json;
using testing::AppendLines;
using testing::Contains;
using testing::DatasetYaml;
using testing::HttpPost;
using testing::HttpReply;
using testing::Lc;
using testing::MetricValue;

const std::string kServerBin = NEREID_DEVAPISERVER_BIN;
const std::string kGmBin = NEREID_GM_BIN;
const std::string kLcBin = NEREID_LC_BIN;
const std::string kKubectl = NEREID_KUBECTL;
const std::string kSourceDir = NEREID_SOURCE_DIR;

constexpr absl::Duration kPoll = testing::kEdgePoll;

testing::EdgeBinaries Binaries() {
  return {kServerBin, kGmBin, kLcBin, kKubectl, kSourceDir};
}

// A Sedna worker's report (what the SDK POSTs to /sedna/workers/{worker}/info).
std::string WorkerReport(const std::string& worker, const std::string& service, int inferences,
                         int hard_examples) {
  return Json{
      {"name", worker},
      {"namespace", "default"},
      {"ownerName", service},
      {"ownerKind", "jointinferenceservice"},
      {"kind", "inference"},
      {"status", "running"},
      {"ownerInfo", {{"inferenceNumber", inferences}, {"hardExampleNumber", hard_examples}}},
      {"results", Json::array()}}
      .dump();
}

// The whitespace-separated cells of `name`'s row in `kubectl get datasets` output.
std::vector<std::string> TableRow(const std::string& table, const std::string& name) {
  for (absl::string_view line : absl::StrSplit(table, '\n')) {
    std::vector<std::string> cells = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (!cells.empty() && cells[0] == name) return cells;
  }
  return {};
}

// The one `resource` object with labels `selector`, once the GM has created it.
Json OnlyChild(testing::EdgeCluster& cluster, const std::string& resource,
               const std::string& selector) {
  Json list;
  REQUIRE(testing::WaitFor(
      [&] {
        list = Json::parse(cluster.Kubectl({"get", resource, "-o", "json", "-l", selector}),
                           nullptr, false);
        return list.is_object() && list["items"].size() == 1;
      },
      absl::Seconds(20), kPoll));
  return list["items"][0];
}

TEST_CASE(
    "end to end: devapiserver + GM + two LCs over mTLS, driven "
    "by kubectl",
    "[integration][e2e]") {
  testing::EdgeCluster cluster(Binaries(), "edge-e2e-");
  const std::string a_file = cluster.dir().File("root-edge-a/data/a.txt");
  const std::string b_file = cluster.dir().File("root-edge-b/data/b.txt");
  std::filesystem::create_directories(cluster.dir().File("root-edge-a/data"));
  std::filesystem::create_directories(cluster.dir().File("root-edge-b/data"));
  AppendLines(a_file, 1, 10);
  AppendLines(b_file, 1, 20);

  // Workers the GM places on edge-b reach its LC at LC_SERVER, as they would on a real node.
  const int lc_b_port = testing::FreePort();
  const std::vector<std::string> gm_args = {"--lc-server",
                                            absl::StrCat("http://127.0.0.1:", lc_b_port)};
  cluster.StartGm(gm_args);
  Lc lc_a = cluster.StartNodeLc("edge-a");
  Lc lc_b = cluster.StartLc("edge-b", testing::TestCerts().NodeCert("edge-b"),
                            testing::TestCerts().NodeKey("edge-b"), "", {},
                            {"--listen", absl::StrCat("127.0.0.1:", lc_b_port)});
  REQUIRE(
      testing::WaitFor([&] { return lc_a.Synced() && lc_b.Synced(); }, absl::Seconds(20), kPoll));

  // kubectl applies one Dataset per node: both counts appear in `kubectl get datasets`.
  cluster.Kubectl({"apply", "-f", "-"}, DatasetYaml("da", "edge-a", "/data/a.txt"));
  cluster.Kubectl({"apply", "-f", "-"}, DatasetYaml("db", "edge-b", "/data/b.txt"));
  REQUIRE(cluster.WaitSamples("da", 10, absl::Seconds(20)));
  REQUIRE(cluster.WaitSamples("db", 20, absl::Seconds(20)));
  {
    const std::string table = cluster.Kubectl({"get", "datasets"});
    INFO(table);
    const std::vector<std::string> da = TableRow(table, "da");
    const std::vector<std::string> db = TableRow(table, "db");
    REQUIRE(da.size() >= 4);
    REQUIRE(db.size() >= 4);
    CHECK(da[1] == "edge-a");
    CHECK(da[3] == "10");
    CHECK(db[1] == "edge-b");
    CHECK(db[3] == "20");
  }

  // Appended lines are counted and reported.
  AppendLines(a_file, 11, 15);
  REQUIRE(cluster.WaitSamples("da", 15, absl::Seconds(20)));

  // The GM away while a dataset grows: the LC counts, keeps the report in its outbox, and delivers
  // it when the GM is back.
  cluster.StopGm();
  AppendLines(b_file, 21, 25);
  REQUIRE(
      testing::WaitFor([&] { return lc_b.LocalSamples("db") == 25; }, absl::Seconds(20), kPoll));
  REQUIRE(testing::WaitFor(
      [&] {
        return lc_b.Status()["outboxDepth"].is_number() &&
               lc_b.Status()["outboxDepth"].get<int64_t>() >= 1;
      },
      absl::Seconds(10), kPoll));
  CHECK(cluster.Samples("db") == 20);  // nobody wrote it while the GM was away
  cluster.StartGm(gm_args);
  REQUIRE(cluster.WaitSamples("db", 25, absl::Seconds(30)));
  REQUIRE(testing::WaitFor([&] { return lc_b.Status()["outboxDepth"] == 0; }, absl::Seconds(10),
                           kPoll));
  CHECK(cluster.Samples("da") == 15);

  // SIGKILL an LC just after its dataset grew, grow it more while it is down, restart it from its
  // database: the final count is right and its outbox drains.
  AppendLines(a_file, 16, 20000);
  REQUIRE(kill(lc_a.process->pid(), SIGKILL) == 0);
  REQUIRE(lc_a.process->Wait(absl::Seconds(10)).ok());
  AppendLines(a_file, 20001, 20030);
  lc_a = cluster.StartNodeLc("edge-a");
  // Restarted from its database (it holds the Dataset before the GM sends anything).
  CHECK(testing::WaitFor([&] { return Contains(lc_a.process->Stderr(), "1 objects in"); },
                         absl::Seconds(5), kPoll));
  REQUIRE(cluster.WaitSamples("da", 20030, absl::Seconds(30)));
  REQUIRE(testing::WaitFor([&] { return lc_a.Synced() && lc_a.Status()["outboxDepth"] == 0; },
                           absl::Seconds(10), kPoll));
  // Nothing the restarted LC resent was refused, and the GM took Dataset reports since its restart
  // without refusing one (a resend of an already written count is accepted, not an error).
  CHECK(lc_a.LinkCounter("reportsRejected") == 0);
  {
    const std::string m = cluster.GmMetrics();
    CHECK(MetricValue(m, "nereid_gm_reports_total{kind=\"Dataset\",outcome=\"accepted\"}") >= 2);
    CHECK(MetricValue(m, "nereid_gm_reports_total{kind=\"Dataset\",outcome=\"rejected\"}") <= 0);
  }

  // Node edge-a's certificate claiming to be edge-b: the LC itself refuses to start with it, and a
  // stream that tries anyway (a raw Sync stream with edge-a's certificate saying hello as edge-b)
  // is refused by the GM.
  {
    const testing::CertSet& certs = testing::TestCerts();
    auto refused = testing::RunCommand(
        {kLcBin, "--node", "edge-b", "--gm", absl::StrCat("127.0.0.1:", cluster.gm_port()), "--db",
         cluster.dir().File("impostor.db"), "--host-root", cluster.dir().File("root-edge-b"),
         "--listen", "127.0.0.1:0", "--tls-ca", certs.ca, "--tls-cert", certs.NodeCert("edge-a"),
         "--tls-key", certs.NodeKey("edge-a")},
        absl::Seconds(10));
    REQUIRE(refused.ok());
    CHECK_FALSE(refused->timed_out);
    CHECK(refused->exit_code != 0);
    CHECK(Contains(refused->err, "not node edge-b"));

    const double refused_before =
        MetricValue(cluster.GmMetrics(), "nereid_edgehub_refused_identities_total");
    testing::TestNode impostor(cluster.gm_port(), certs, "edge-a");
    impostor.Hello("edge-b");
    const grpc::Status end = impostor.AwaitEnd(absl::Seconds(10));
    CHECK(end.error_code() == grpc::StatusCode::PERMISSION_DENIED);
    CHECK(MetricValue(cluster.GmMetrics(), "nereid_edgehub_refused_identities_total") ==
          refused_before + 1);
  }
  // An LC whose certificate comes from another CA: the TLS handshake fails.
  {
    const testing::CertSet& untrusted = testing::UntrustedCerts();
    Lc stranger = cluster.StartLc("edge-a", untrusted.NodeCert("edge-a"),
                                  untrusted.NodeKey("edge-a"), "stranger");
    REQUIRE(
        testing::WaitFor([&] { return stranger.Status()["cloudLink"]["lastError"].is_string(); },
                         absl::Seconds(15), kPoll));
    CHECK_FALSE(stranger.Synced());
    CHECK(stranger.Get("/api/v1/datasets")["items"].empty());
  }
  // Neither disturbed the real nodes: both still synced, and new lines are still counted.
  CHECK(lc_a.Synced());
  CHECK(lc_b.Synced());
  AppendLines(b_file, 26, 30);
  REQUIRE(cluster.WaitSamples("db", 30, absl::Seconds(20)));
  CHECK(cluster.Samples("da") == 20030);

  // A worker report POSTed to an LC's REST (Sedna's shape) is forwarded to the GM and answered:
  // about a JointInferenceService the GM never placed on edge-b, the GM rejects it for good
  // (ObjectGone) and the LC drops it from its outbox.
  {
    const std::string gm_before = cluster.GmMetrics();
    const double rejected_before =
        MetricValue(gm_before, "nereid_edgehub_reports_total{result=\"rejected\"}");
    const int64_t lc_rejected_before = lc_b.LinkCounter("reportsRejected");
    HttpReply posted = HttpPost(lc_b.port, "/sedna/workers/edgeworker-1/info",
                                WorkerReport("edgeworker-1", "helmet", 10, 2));
    REQUIRE(posted.status == 200);
    CHECK(Json::parse(posted.body, nullptr, false) == Json{{"Status", 200}, {"Message", "OK"}});
    Json workers = lc_b.Get("/api/v1/workers");
    REQUIRE(workers["items"].size() == 1);
    CHECK(workers["items"][0]["forwarded"] == true);
    REQUIRE(testing::WaitFor(
        [&] { return lc_b.LinkCounter("reportsRejected") == lc_rejected_before + 1; },
        absl::Seconds(10), kPoll));
    CHECK(MetricValue(cluster.GmMetrics(), "nereid_edgehub_reports_total{result=\"rejected\"}") ==
          rejected_before + 1);
    REQUIRE(testing::WaitFor([&] { return lc_b.Status()["outboxDepth"] == 0; }, absl::Seconds(10),
                             kPoll));
  }
  // With the JointInferenceService controller in the GM: a service whose edge worker runs on
  // edge-b is sent to edge-b, and the report its worker (the Sedna SDK's JointInference, with only
  // the env the GM gave it: the example's template sets none of Sedna's) sends lands in the
  // service's status.metrics.
  if (Contains(cluster.GmStderr(), "jointinference controller:")) {
    cluster.Kubectl({"apply", "-f", kSourceDir + "/examples/model.yaml"});
    std::ifstream in(kSourceDir + "/examples/joint-inference-service.yaml");
    std::string yaml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t node_at = yaml.find("nodeName: \"edge-0\"");
    REQUIRE(node_at != std::string::npos);
    yaml.replace(node_at, std::string("nodeName: \"edge-0\"").size(), "nodeName: \"edge-b\"");
    const int64_t objects_before = lc_b.Status()["objects"].get<int64_t>();
    cluster.Kubectl({"apply", "-f", "-"}, yaml);
    // The service and its edge model arrive on edge-b.
    REQUIRE(testing::WaitFor(
        [&] { return lc_b.Status()["objects"].get<int64_t>() >= objects_before + 2; },
        absl::Seconds(20), kPoll));
    const testing::SdkWorker edge_worker(
        OnlyChild(cluster, "deployments", "jointinferenceservice.sedna.io/worker-type=edge"),
        testing::SdkClass::kJointInference);
    CHECK(edge_worker.OwnerName() == "helmet-detection-inference");
    const int64_t acked_before = lc_b.LinkCounter("reportsAcked");
    HttpReply posted = edge_worker.Post(edge_worker.InferenceReport(17, 3));
    REQUIRE(posted.status == 200);
    REQUIRE(testing::WaitFor([&] { return lc_b.LinkCounter("reportsAcked") > acked_before; },
                             absl::Seconds(10), kPoll));
    Json metrics;
    REQUIRE(testing::WaitFor(
        [&] {
          Json ji = Json::parse(cluster.Kubectl({"get", "jointinferenceservice",
                                                 "helmet-detection-inference", "-o", "json"}),
                                nullptr, false);
          if (!ji.is_object()) return false;
          metrics = ji.value("status", Json::object()).value("metrics", Json::array());
          return !metrics.empty();
        },
        absl::Seconds(20), absl::Milliseconds(200)));
    INFO(metrics.dump());
    CHECK(metrics.size() == 3);  // and uploadCloudRatio
    CHECK(std::count(metrics.begin(), metrics.end(),
                     Json{{"key", "inferenceNumber"}, {"value", "17"}}) == 1);
    CHECK(std::count(metrics.begin(), metrics.end(),
                     Json{{"key", "hardExampleNumber"}, {"value", "3"}}) == 1);
  } else {
    WARN("the GM runs no JointInferenceService controller: worker report -> status not checked");
  }

  // A FederatedLearningJob whose training worker runs on edge-b: the SDK's FederatedLearning
  // never sets its kind (ownerKind "default"); edge-b's LC attributes the report to the job the
  // GM placed there, so the round reaches the job's status and the metrics the aggregation Model.
  {
    cluster.Kubectl({"apply", "-f", "-"}, R"(apiVersion: sedna.io/v1alpha1
kind: Model
metadata: {name: fl-model}
spec: {url: /models/fl/model.pb, format: pb}
---
apiVersion: sedna.io/v1alpha1
kind: FederatedLearningJob
metadata: {name: fl-demo}
spec:
  aggregationWorker:
    model: {name: fl-model}
    template: {spec: {containers: [{name: agg, image: agg:1}]}}
  trainingWorkers:
    - dataset: {name: db}
      template: {spec: {nodeName: edge-b, containers: [{name: train, image: train:1}]}}
)");
    const testing::SdkWorker trainer(
        OnlyChild(cluster, "pods", "federatedlearningjob.sedna.io/worker-type=train"),
        testing::SdkClass::kFederatedLearning);
    REQUIRE(trainer.OwnerName() == "fl-demo");
    const Json results = Json::array(
        {{{"format", "pb"}, {"url", "/home/data/models/fl/model.pb"},
          {"metrics", {{"accuracy", Json::array({0.91})}}}}});
    const Json round = {{"currentRound", 1},
                        {"sampleCount", 30},
                        {"startTime", "2026-12-07 10:00:00"},
                        {"updateTime", "2026-12-07 10:01:00"}};
    // Until edge-b holds the job, the report is accepted and not forwarded (nothing to attribute
    // it to); the SDK reports every round, so the test does too.
    Json job;
    REQUIRE(testing::WaitFor(
        [&] {
          if (trainer.Post(trainer.TaskReport("train", "running", results, round)).status != 200) {
            return false;
          }
          job = Json::parse(cluster.Kubectl({"get", "federatedlearningjob", "fl-demo", "-o", "json"}),
                            nullptr, false);
          return job.is_object() &&
                 job.value("status", Json::object()).value("currentRound", 0) == 1;
        },
        absl::Seconds(20), absl::Milliseconds(300)));
    Json workers = lc_b.Get("/api/v1/workers");
    bool attributed = false;
    for (const Json& w : workers["items"]) {
      if (w.value("name", "") == trainer.Name()) {
        CHECK(w.value("ownerKind", "") == "default");
        attributed = w.value("attributedKind", "") == "FederatedLearningJob";
      }
    }
    CHECK(attributed);
    Json model_metrics;
    REQUIRE(testing::WaitFor(
        [&] {
          Json m = Json::parse(cluster.Kubectl({"get", "model", "fl-model", "-o", "json"}),
                               nullptr, false);
          if (!m.is_object()) return false;
          model_metrics = m.value("status", Json::object()).value("metrics", Json::array());
          return !model_metrics.empty();
        },
        absl::Seconds(20), absl::Milliseconds(200)));
    CHECK(model_metrics == Json::array({{{"key", "accuracy"}, {"value", "0.91"}}}));
  }

  for (Lc* lc : {&lc_a, &lc_b}) {
    auto code = lc->process->Stop(absl::Seconds(10));
    REQUIRE(code.ok());
    CHECK(*code == 0);
  }
  cluster.StopGm();
}

}  // namespace
}  // namespace nereid
