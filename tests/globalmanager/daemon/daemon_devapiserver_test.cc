// Integration (real processes on loopback): the GM against a real devapiserver process, driven by
// the real kubectl, with edge nodes on real mTLS streams.
//   - in-process GM (RestClient from the generated kubeconfig): a kubectl-applied Dataset reaches
//     the node; the node's reports become status visible to `kubectl get datasets`; an invalid
//     Dataset gets a condition and a Warning Event; a delete reaches the node;
//   - two in-process GMs on one Lease: only the leader serves; the other takes over on stop;
//   - the `globalmanager` binary: flags, readiness, SIGTERM releases the Lease, and after a
//     SIGKILL of the leader the other process takes over once the Lease expires.

#include <catch2/catch.hpp>

#include <csignal>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/kube/object.h"
#include "globalmanager/daemon.h"
#include "nlohmann/json.hpp"
#include "tests/common/net/test_certs.h"
#include "tests/fakes/eventually.h"
#include "tests/globalmanager/daemon/daemon_test_util.h"
#include "tests/globalmanager/edgehub/test_node.h"
#include "tests/support/subprocess.h"

namespace nereid::gm {
namespace {

using fakes::Eventually;
using kube::Json;
using nereid::testing::CommandResult;
using nereid::testing::Subprocess;
using nereid::testing::TempDir;
using nereid::testing::TestCerts;
using nereid::testing::TestNode;
using testing::HttpGet;
using testing::NextChangeSkippingControl;

const std::string kServerBin = NEREID_DEVAPISERVER_BIN;
const std::string kGmBin = NEREID_GM_BIN;
const std::string kKubectl = NEREID_KUBECTL;
const std::string kSourceDir = NEREID_SOURCE_DIR;

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// One devapiserver process with the sedna.io CRDs applied, and kubectl bound to it.
class ApiServer {
 public:
  ApiServer() : dir_(*TempDir::Create("gm-it-")) {
    Subprocess::Options options;
    options.argv = {kServerBin, "--listen", "127.0.0.1:0", "--kubeconfig-out", kubeconfig()};
    auto started = Subprocess::Start(std::move(options));
    REQUIRE(started.ok());
    process_ = *std::move(started);
    auto line = process_->ReadLine(absl::Seconds(15));
    REQUIRE(line.ok());
    REQUIRE_FALSE(nereid::testing::ListenUrl(*line).empty());
    Ok({"apply", "-f", kSourceDir + "/deploy/crds/"});
  }

  std::string kubeconfig() const { return dir_.File("kubeconfig"); }
  const TempDir& dir() const { return dir_; }

  CommandResult Kubectl(const std::vector<std::string>& args, std::string_view stdin_data = "") {
    std::vector<std::string> argv = {kKubectl, "--kubeconfig", kubeconfig(), "--cache-dir",
                                     dir_.File("kubectl-cache")};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = nereid::testing::RunCommand(argv, absl::Seconds(30), {{"HOME", dir_.path()}},
                                         stdin_data);
    REQUIRE(r.ok());
    return *r;
  }
  std::string Ok(const std::vector<std::string>& args, std::string_view stdin_data = "") {
    CommandResult r = Kubectl(args, stdin_data);
    INFO("kubectl " << args[0] << ": " << r.err);
    REQUIRE(r.exit_code == 0);
    return r.out;
  }
  Json GetJson(const std::vector<std::string>& what) {
    std::vector<std::string> args = {"get"};
    args.insert(args.end(), what.begin(), what.end());
    args.insert(args.end(), {"-o", "json"});
    Json doc = Json::parse(Ok(args), nullptr, false);
    REQUIRE(doc.is_object());
    return doc;
  }
  std::string LeaseHolder() {
    CommandResult r = Kubectl({"get", "lease", "-n", "default", "nereid-gm", "-o", "json"});
    if (r.exit_code != 0) return "";
    Json lease = Json::parse(r.out, nullptr, false);
    return kube::StringAt(lease, "spec.holderIdentity");
  }

 private:
  TempDir dir_;
  std::unique_ptr<Subprocess> process_;
};

std::string DatasetYaml(const std::string& name, const std::string& node,
                        const std::string& url = "/data/train.txt") {
  return absl::StrCat(R"(apiVersion: sedna.io/v1alpha1
kind: Dataset
metadata:
  name: )", name, R"(
  namespace: default
spec:
  url: ")", url, R"("
  format: txt
  nodeName: )", node, "\n");
}

GmConfig InProcessConfig(const ApiServer& api, const std::string& id) {
  GmConfig config;
  config.kubeconfig = api.kubeconfig();
  config.listen = "127.0.0.1:0";
  config.http_listen = "127.0.0.1:0";
  config.tls = TestCerts().ServerTls();
  config.leader_election.identity = id;
  config.leader_election.lease_namespace = "default";
  config.leader_election.lease_duration = absl::Seconds(3);
  config.leader_election.renew_deadline = absl::Seconds(2);
  config.leader_election.retry_period = absl::Milliseconds(500);
  return config;
}

std::unique_ptr<Daemon> StartGm(const ApiServer& api, const std::string& id) {
  absl::StatusOr<std::unique_ptr<Daemon>> gm = Daemon::Create(InProcessConfig(api, id));
  INFO(gm.status().ToString());
  REQUIRE(gm.ok());
  absl::Status started = (*gm)->Start();
  INFO(started.ToString());
  REQUIRE(started.ok());
  return *std::move(gm);
}

edge::v1::StatusReport CountReport(uint64_t seq, const Json& dataset, int64_t samples) {
  edge::v1::StatusReport report;
  report.set_seq(seq);
  report.mutable_ref()->set_kind("Dataset");
  report.mutable_ref()->set_namespace_("default");
  report.mutable_ref()->set_name(kube::Name(dataset));
  report.mutable_ref()->set_uid(kube::Uid(dataset));
  report.set_observed_version(std::to_string(kube::Generation(dataset)));
  report.mutable_dataset()->set_number_of_samples(samples);
  report.mutable_dataset()->mutable_update_time()->set_seconds(1'750'000'000);
  return report;
}

TEST_CASE("kubectl-applied Datasets reach their node over mTLS; reports show in kubectl get") {
  ApiServer api;
  std::unique_ptr<Daemon> gm = StartGm(api, "gm-it");
  REQUIRE(Eventually([&] { return gm->ready(); }, absl::Seconds(20)));
  CHECK(api.LeaseHolder() == "gm-it");

  CHECK(Contains(api.Ok({"apply", "-f", "-"}, DatasetYaml("d1", "edge-a")), "created"));
  Json d1 = api.GetJson({"dataset", "d1"});

  TestNode node(gm->edge_port(), TestCerts(), "edge-a");
  node.Hello("edge-a");
  edge::v1::Change change = NextChangeSkippingControl(node);
  REQUIRE(change.has_upsert());
  CHECK(change.upsert().ref().name() == "d1");
  CHECK(change.upsert().ref().uid() == kube::Uid(d1));
  CHECK(change.upsert().dataset().url() == "/data/train.txt");
  CHECK(change.upsert().dataset().format() == "txt");
  node.Ack(change);

  // Report → status through the status subresource → kubectl.
  node.Report(CountReport(1, d1, 1234));
  std::optional<edge::v1::ReportAck> ack = testing::NextReportAckSkipping(node);
  REQUIRE(ack.has_value());
  CHECK(ack->result() == edge::v1::REPORT_ACCEPTED);
  Json status = api.GetJson({"dataset", "d1"})["status"];
  CHECK(status["numberOfSamples"] == 1234);
  CHECK(status["updateTime"] == "2025-06-15T15:06:40Z");
  CHECK(status["observedGeneration"] == 1);
  REQUIRE(status["conditions"].is_array());  // kept by the CRD schema (not pruned)
  CHECK(status["conditions"][0]["type"] == "Counted");
  CHECK(status["conditions"][0]["status"] == "True");
  std::string table = api.Ok({"get", "datasets"});
  CHECK(Contains(table, "SAMPLES"));
  CHECK(Contains(table, "1234"));
  // The GM caches Sedna objects without kubectl's last-applied annotation (cache_transform.h);
  // its status writes leave the server's copy whole, so kubectl apply still finds no change.
  CHECK(api.GetJson({"dataset", "d1"})["metadata"]["annotations"].contains(
      "kubectl.kubernetes.io/last-applied-configuration"));
  CHECK(Contains(api.Ok({"apply", "-f", "-"}, DatasetYaml("d1", "edge-a")), "unchanged"));

  // An LC error shows in the ERROR column and as a Warning Event.
  edge::v1::StatusReport error = CountReport(2, d1, 0);
  error.mutable_dataset()->set_error_reason("PathNotFound");
  error.mutable_dataset()->set_error_message("/rootfs/data/train.txt does not exist");
  node.Report(error);
  ack = testing::NextReportAckSkipping(node);
  REQUIRE(ack.has_value());
  CHECK(ack->result() == edge::v1::REPORT_ACCEPTED);
  CHECK(Contains(api.Ok({"get", "datasets"}), "PathNotFound"));
  REQUIRE(Eventually(
      [&] {
        return Contains(api.Ok({"get", "events", "--field-selector", "involvedObject.name=d1"}),
                        "CountFailed");
      },
      absl::Seconds(10)));

  // A spec change is sent with the new generation; a status write is not resent.
  api.Ok({"patch", "dataset", "d1", "--type", "merge", "-p", R"({"spec":{"url":"/data/v2.txt"}})"});
  change = NextChangeSkippingControl(node);
  CHECK(change.upsert().version() == "2");
  CHECK(change.upsert().dataset().url() == "/data/v2.txt");
  node.Ack(change);

  // An invalid Dataset: nothing sent, a condition and a Warning Event.
  api.Ok({"apply", "-f", "-"}, DatasetYaml("bad", "edge-a", "relative/path.txt"));
  REQUIRE(Eventually(
      [&] {
        Json bad = api.GetJson({"dataset", "bad"});
        return kube::StringAt(bad, "status.reason") == "InvalidSpec";
      },
      absl::Seconds(10)));
  CHECK(Contains(api.GetJson({"dataset", "bad"})["status"]["message"].get<std::string>(),
                 "spec.url"));
  REQUIRE(Eventually(
      [&] {
        return Contains(api.Ok({"get", "events", "--field-selector", "involvedObject.name=bad"}),
                        "InvalidSpec");
      },
      absl::Seconds(10)));

  // Delete → the node is told to remove it (and nothing about "bad" ever reached it).
  api.Ok({"delete", "dataset", "d1"});
  change = NextChangeSkippingControl(node);
  REQUIRE(change.has_remove());
  CHECK(change.remove().ref().name() == "d1");
  node.Ack(change);

  // Metrics name the controllers and the hub.
  testing::HttpResult metrics = HttpGet(gm->http_port(), "/metrics");
  CHECK(Contains(metrics.body, "nereid_gm_reconcile_total{controller=\"dataset\""));
  CHECK(Contains(metrics.body, "nereid_gm_reports_total{kind=\"Dataset\",outcome=\"accepted\"} 2"));
  CHECK(Contains(metrics.body, "nereid_edgehub_connected_nodes 1"));
  gm->Stop();
  CHECK(api.LeaseHolder().empty());  // released on a graceful stop
}

TEST_CASE("two GMs on one devapiserver: only the leader serves; the other takes over") {
  ApiServer api;
  api.Ok({"apply", "-f", "-"}, DatasetYaml("d1", "edge-b"));
  std::unique_ptr<Daemon> a = StartGm(api, "gm-a");
  REQUIRE(Eventually([&] { return a->ready(); }, absl::Seconds(20)));
  std::unique_ptr<Daemon> b = StartGm(api, "gm-b");
  REQUIRE(Eventually([&] {
    return Contains(HttpGet(b->http_port(), "/readyz").body, "leader: gm-a");
  }));
  CHECK(HttpGet(b->http_port(), "/readyz").status == 503);
  {
    TestNode refused(b->edge_port(), TestCerts(), "edge-b");
    refused.Hello("edge-b");
    CHECK(refused.AwaitEnd().error_code() == grpc::StatusCode::UNAVAILABLE);
  }
  const absl::Time stop = absl::Now();
  a->Stop();
  REQUIRE(Eventually([&] { return b->ready(); }, absl::Seconds(15)));
  CHECK(absl::Now() - stop < absl::Seconds(3));  // within the lease duration
  CHECK(api.LeaseHolder() == "gm-b");
  TestNode node(b->edge_port(), TestCerts(), "edge-b");
  node.Hello("edge-b");
  CHECK(NextChangeSkippingControl(node).upsert().ref().name() == "d1");
  b->Stop();
}

// ---- The binary.

struct GmProcess {
  std::unique_ptr<Subprocess> process;
  int edge_port = 0;
  int http_port = 0;
};

GmProcess StartGmProcess(ApiServer& api, const std::string& id, const std::string& config_file) {
  Subprocess::Options options;
  options.argv = {kGmBin,          "--kubeconfig", api.kubeconfig(), "--insecure",
                  "--listen",      "127.0.0.1:0",  "--http-listen",  "127.0.0.1:0",
                  "--lease-namespace", "default",  "--id",           id,
                  "--config",      config_file};
  options.capture_stderr = true;
  auto started = Subprocess::Start(std::move(options));
  REQUIRE(started.ok());
  GmProcess gm;
  gm.process = *std::move(started);
  auto line = gm.process->ReadLine(absl::Seconds(20));
  INFO(line.status().ToString());
  REQUIRE(line.ok());
  // "globalmanager: edge hub on port N, http on port M"
  std::vector<std::string> words = absl::StrSplit(*line, ' ');
  REQUIRE(words.size() == 10);
  gm.edge_port = std::stoi(words[5]);
  gm.http_port = std::stoi(words[9]);
  return gm;
}

TEST_CASE("the globalmanager binary: flags, readiness, SIGTERM, failover after SIGKILL") {
  {
    auto help = nereid::testing::RunCommand({kGmBin, "--help"}, absl::Seconds(10));
    REQUIRE(help.ok());
    CHECK(help->exit_code == 0);
    CHECK(Contains(help->out, "--kubeconfig"));
    auto bad = nereid::testing::RunCommand({kGmBin, "--insecure", "--listen", "nope"},
                                           absl::Seconds(10));
    REQUIRE(bad.ok());
    CHECK(bad->exit_code == 2);
    CHECK(Contains(bad->err, "--listen"));
    auto no_tls = nereid::testing::RunCommand({kGmBin}, absl::Seconds(10));
    REQUIRE(no_tls.ok());
    CHECK(no_tls->exit_code == 2);
    CHECK(Contains(no_tls->err, "--tls-ca"));
  }
  ApiServer api;
  const std::string config = *api.dir().Write("gm.yaml", R"(
leaderElection: {leaseDuration: 3s, renewDeadline: 2s, retryPeriod: 500ms}
localController: {server: http://localhost:9100}
)");
  GmProcess a = StartGmProcess(api, "gm-proc-a", config);
  REQUIRE(Eventually([&] { return HttpGet(a.http_port, "/readyz").status == 200; },
                     absl::Seconds(20)));
  REQUIRE(Eventually([&] { return Contains(a.process->Stderr(), "PLAINTEXT"); }));  // --insecure
  GmProcess b = StartGmProcess(api, "gm-proc-b", config);
  REQUIRE(Eventually([&] { return HttpGet(b.http_port, "/readyz").status == 503; }));

  // SIGKILL: no release; b takes over once the Lease expires (3 s) — not before.
  REQUIRE(kill(a.process->pid(), SIGKILL) == 0);
  const absl::Time killed = absl::Now();
  REQUIRE(Eventually([&] { return HttpGet(b.http_port, "/readyz").status == 200; },
                     absl::Seconds(20)));
  const absl::Duration takeover = absl::Now() - killed;
  CHECK(takeover >= absl::Seconds(2));  // the lease had to run out (first seen up to 0.5 s late)
  CHECK(takeover < absl::Seconds(10));
  CHECK(api.LeaseHolder() == "gm-proc-b");

  // SIGTERM: graceful, exit 0, the Lease released.
  absl::StatusOr<int> code = b.process->Stop(absl::Seconds(15));
  REQUIRE(code.ok());
  CHECK(*code == 0);
  CHECK(api.LeaseHolder().empty());
}

}  // namespace
}  // namespace nereid::gm
