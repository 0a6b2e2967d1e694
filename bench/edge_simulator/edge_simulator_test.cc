// The edge simulator against an in-process edge hub over mTLS: node certificates issued in process
// are accepted and identify the node, every change is ACKed and recorded, reports are answered
// (RETRY ones resent), and a node whose stream ends redials with its inventory.

#include "bench/edge_simulator/edge_simulator.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "bench/edge_simulator/node_certs.h"
#include "bench/edge_simulator/proc_stats.h"
#include "common/net/tls.h"
#include "globalmanager/edgehub/edge_hub.h"
#include "globalmanager/edgehub/server.h"
#include "tests/common/net/test_certs.h"

namespace nereid::bench {
namespace {

namespace v1 = edge::v1;

v1::Resource Dataset(const std::string& name, const std::string& version, const std::string& node) {
  v1::Resource resource;
  v1::ObjectRef* ref = resource.mutable_ref();
  ref->set_kind("Dataset");
  ref->set_namespace_("default");
  ref->set_name(name);
  ref->set_uid("uid-" + name);
  resource.set_version(version);
  resource.mutable_dataset()->set_url("/data/" + name + ".txt");
  resource.mutable_dataset()->set_format("txt");
  resource.mutable_dataset()->set_node_name(node);
  return resource;
}

// Answers RETRY to the first report about each object named in `retry_once`, ACCEPTED otherwise;
// remembers the samples it accepted per node/object.
class RecordingHandler final : public gm::ReportHandler {
 public:
  explicit RecordingHandler(std::vector<std::string> retry_once) {
    for (std::string& name : retry_once) retry_once_[name] = true;
  }
  void HandleReport(std::string_view node, std::shared_ptr<const v1::StatusReport> report,
                    gm::ReportCompletion done) override {
    {
      absl::MutexLock lock(&mu_);
      auto retry = retry_once_.find(report->ref().name());
      if (retry != retry_once_.end() && retry->second) {
        retry->second = false;
        done(gm::ReportOutcome::Retry("Busy", "try again"));
        return;
      }
      accepted_[std::string(node) + "/" + report->ref().name()] =
          report->dataset().number_of_samples();
    }
    done(gm::ReportOutcome::Accepted());
  }
  absl::flat_hash_map<std::string, int64_t> accepted() {
    absl::MutexLock lock(&mu_);
    return accepted_;
  }

 private:
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, bool> retry_once_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, int64_t> accepted_ ABSL_GUARDED_BY(mu_);
};

std::unique_ptr<NodeCertIssuer> Issuer(const testing::CertSet& certs) {
  absl::StatusOr<std::string> ca = net::ReadPemFile(certs.ca);
  absl::StatusOr<std::string> key = net::ReadPemFile(certs.dir + "/ca.key");
  REQUIRE(ca.ok());
  REQUIRE(key.ok());
  absl::StatusOr<std::unique_ptr<NodeCertIssuer>> issuer = NodeCertIssuer::Create(*ca, *key);
  REQUIRE(issuer.ok());
  return *std::move(issuer);
}

TEST_CASE("NodeCertIssuer: CN and DNS SAN name the node; a wrong CA key is refused") {
  auto certs = testing::MakeCertSet("");
  std::unique_ptr<NodeCertIssuer> issuer = Issuer(certs->set());
  absl::StatusOr<NodeIdentity> identity = issuer->Issue("edge-0007");
  REQUIRE(identity.ok());
  absl::StatusOr<std::vector<std::string>> names = net::CertificateNames(identity->cert_pem);
  REQUIRE(names.ok());
  CHECK(*names == std::vector<std::string>{"edge-0007", "edge-0007"});
  CHECK(identity->key_pem.find("PRIVATE KEY") != std::string::npos);

  auto other = testing::MakeCertSet("");
  absl::StatusOr<std::string> ca = net::ReadPemFile(certs->set().ca);
  absl::StatusOr<std::string> other_key = net::ReadPemFile(other->set().dir + "/ca.key");
  REQUIRE(ca.ok());
  REQUIRE(other_key.ok());
  CHECK(absl::IsInvalidArgument(NodeCertIssuer::Create(*ca, *other_key).status()));
  CHECK(absl::IsInvalidArgument(NodeCertIssuer::Create("not a certificate", *other_key).status()));
}

TEST_CASE(
    "EdgeSimulator: ACKs and records every change, reports with resend, redials with inventory") {
  auto certs = testing::MakeCertSet("");
  std::unique_ptr<NodeCertIssuer> issuer = Issuer(certs->set());
  RecordingHandler handler({"ds-1"});
  gm::EdgeHub::Options hub_options;
  hub_options.report_handler = &handler;
  gm::EdgeHub hub(hub_options);
  hub.MarkSynced();
  gm::EdgeHubServerOptions server_options;
  server_options.listen = "127.0.0.1:0";
  server_options.tls = certs->set().ServerTls();
  auto server = gm::EdgeHubServer::Start(&hub, server_options);
  REQUIRE(server.ok());

  const std::vector<std::string> nodes = {"edge-0000", "edge-0001", "edge-0002"};
  std::vector<NodeIdentity> identities;
  for (const std::string& node : nodes) {
    absl::StatusOr<NodeIdentity> identity = issuer->Issue(node);
    REQUIRE(identity.ok());
    identities.push_back(*std::move(identity));
  }
  EdgeSimulator::Options options;
  options.gm_address = "127.0.0.1:" + std::to_string((*server)->port());
  absl::StatusOr<std::string> ca = net::ReadPemFile(certs->set().ca);
  REQUIRE(ca.ok());
  options.ca_pem = *ca;
  options.report_retry = {absl::Milliseconds(50), 1.0, absl::Milliseconds(50), 0};
  options.reconnect_backoff = {absl::Milliseconds(50), 1.0, absl::Milliseconds(50), 0};
  auto sim = EdgeSimulator::Create(options, identities);
  REQUIRE(sim.ok());
  (*sim)->Connect();
  REQUIRE((*sim)->WaitFor([](const SimTally& t) { return t.resyncs_done.load() == 3; },
                          absl::Seconds(30)));
  CHECK(hub.metrics().connected_nodes().Value() == 3);

  // Two datasets per node; each arrives at its node only and is ACKed.
  const absl::Time created = absl::Now();
  for (const std::string& node : nodes) {
    for (int d = 0; d < 2; ++d) {
      REQUIRE(hub.Upsert(node, Dataset(node + "-ds-" + std::to_string(d), "1", node)).ok());
    }
  }
  REQUIRE(
      (*sim)->WaitFor([](const SimTally& t) { return t.upserts.load() == 6; }, absl::Seconds(30)));
  std::vector<Arrival> arrivals = (*sim)->Arrivals();
  REQUIRE(arrivals.size() == 6);
  for (const Arrival& arrival : arrivals) {
    CHECK(arrival.key.rfind("Dataset/default/" + arrival.node + "-ds-", 0) == 0);
    CHECK(arrival.version == "1");
    CHECK(arrival.at >= created);
    CHECK_FALSE(arrival.removed);
  }
  CHECK((*sim)->Held() == std::vector<std::size_t>{2, 2, 2});
  // Every change ACKed: nothing left in flight at the hub.
  REQUIRE((*sim)->WaitFor(
      [&](const SimTally&) {
        for (const std::string& node : nodes) {
          if (hub.Node(node).in_flight != 0) return false;
        }
        return true;
      },
      absl::Seconds(10)));
  CHECK(hub.metrics().changes_acked().Value() == 6);

  // Reports: one per dataset; "edge-000N-ds-1"... only the object named exactly "ds-1" would be
  // retried, so name one that way on node 0 and let it be answered RETRY once.
  REQUIRE(hub.Upsert("edge-0000", Dataset("ds-1", "1", "edge-0000")).ok());
  REQUIRE(
      (*sim)->WaitFor([](const SimTally& t) { return t.upserts.load() == 7; }, absl::Seconds(30)));
  const std::size_t queued =
      (*sim)->QueueDatasetReports([](const std::string& node, const std::string& key) -> int64_t {
        return static_cast<int64_t>(node.size() * 100 + key.size());
      });
  CHECK(queued == 7);
  REQUIRE((*sim)->WaitFor([](const SimTally& t) { return t.reports_accepted.load() == 7; },
                          absl::Seconds(30)));
  CHECK((*sim)->tally().reports_retry.load() == 1);
  CHECK((*sim)->tally().reports_sent.load() == 8);
  const auto accepted = handler.accepted();
  CHECK(accepted.size() == 7);
  CHECK(accepted.at("edge-0001/edge-0001-ds-0") ==
        static_cast<int64_t>(9 * 100 + std::string("Dataset/default/edge-0001-ds-0").size()));
  for (const ReportRecord& record : (*sim)->Reports()) {
    CHECK(record.result == v1::REPORT_ACCEPTED);
    CHECK(record.attempts == (record.key == "Dataset/default/ds-1" ? 2 : 1));
    CHECK(record.answered >= record.first_sent);
  }

  // The hub finishes every stream (a GM losing leadership); the nodes redial with their inventory
  // and, holding every object at the wanted version, get nothing sent again.
  hub.SetAcceptingStreams(false);
  REQUIRE((*sim)->WaitFor([](const SimTally& t) { return t.streams_ended.load() >= 3; },
                          absl::Seconds(30)));
  hub.SetAcceptingStreams(true);
  REQUIRE((*sim)->WaitFor([](const SimTally& t) { return t.resyncs_done.load() >= 6; },
                          absl::Seconds(30)));
  CHECK((*sim)->tally().upserts.load() == 7);
  CHECK((*sim)->tally().repeated_upserts.load() == 0);

  // A removal is ACKed and the object is no longer held.
  REQUIRE(hub.Remove("edge-0002", Dataset("edge-0002-ds-0", "1", "edge-0002").ref()).ok());
  REQUIRE(
      (*sim)->WaitFor([](const SimTally& t) { return t.removes.load() == 1; }, absl::Seconds(30)));
  CHECK((*sim)->Held() == std::vector<std::size_t>{3, 2, 1});

  (*sim)->Stop();
  CHECK((*sim)->tally().streams_live.load() == 0);
  (*server)->Stop(absl::Seconds(1));
}

TEST_CASE("Percentiles are nearest-rank") {
  std::vector<double> values;
  for (int i = 100; i >= 1; --i) values.push_back(i);
  CHECK(Percentile(values, 0.5) == 50);
  CHECK(Percentile(values, 0.99) == 99);
  CHECK(Percentile(values, 1.0) == 100);
  CHECK(Percentile({}, 0.5) == 0);
  const Summary summary = Summarize(values);
  CHECK(summary.count == 100);
  CHECK(summary.p90 == 90);
  CHECK(summary.max == 100);
  CHECK(summary.mean == Approx(50.5));
}

TEST_CASE("ReadProcStats reads this process") {
  const ProcStats stats = ReadProcStats(getpid());
  CHECK(stats.ok());
  CHECK(stats.vm_hwm_kb >= stats.vm_rss_kb / 2);
  CHECK(stats.threads >= 1);
  CHECK(ReadProcStats(-1).vm_hwm_kb == -1);
}

}  // namespace
}  // namespace nereid::bench
