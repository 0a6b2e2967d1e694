// The GM daemon in-process against the in-memory fake API server, with real mTLS node streams and
// the real health/metrics listener: start order, readiness, a Dataset reaching a node and its
// report reaching status, leader election between two replicas (only the leader serves; takeover
// after a graceful stop; a leader that cannot renew gives up and refuses streams).

#include "globalmanager/daemon.h"

#include <catch2/catch.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/api/sedna_contract.h"
#include "common/kube/resource.h"
#include "httplib.h"
#include "tests/common/net/test_certs.h"
#include "tests/fakes/eventually.h"
#include "tests/fakes/fake_kube_client.h"
#include "tests/fakes/intercepting_kube_client.h"
#include "tests/globalmanager/daemon/daemon_test_util.h"
#include "tests/globalmanager/edgehub/test_node.h"
#include "tests/support/loopback_connection.h"

namespace nereid::gm {
namespace {

using fakes::Eventually;
using kube::Json;
using testing::HttpGet;
using testing::NextChangeSkippingControl;
using nereid::testing::TestCerts;
using nereid::testing::TestNode;

GmConfig TestConfig(const std::string& id) {
  GmConfig config;
  config.listen = "127.0.0.1:0";
  config.http_listen = "127.0.0.1:0";
  config.tls = TestCerts().ServerTls();
  config.leader_election.identity = id;
  config.leader_election.lease_namespace = "kube-system";
  // Short timings keep the takeover tests quick (client-go's ratios).
  config.leader_election.lease_duration = absl::Seconds(3);
  config.leader_election.renew_deadline = absl::Seconds(2);
  config.leader_election.retry_period = absl::Milliseconds(500);
  config.min_resync_period_seconds = 0;
  return config;
}

std::unique_ptr<Daemon> StartDaemon(kube::KubeClient* client, const std::string& id) {
  DaemonOptions options;
  options.client = client;
  options.shutdown_grace = absl::Seconds(1);
  absl::StatusOr<std::unique_ptr<Daemon>> daemon = Daemon::Create(TestConfig(id), options);
  REQUIRE(daemon.ok());
  absl::Status started = (*daemon)->Start();
  INFO(started.ToString());
  REQUIRE(started.ok());
  return *std::move(daemon);
}

Json DatasetObject(const std::string& name, const std::string& node) {
  return Json{{"apiVersion", "sedna.io/v1alpha1"},
              {"kind", "Dataset"},
              {"metadata", {{"name", name}, {"namespace", "default"}}},
              {"spec", {{"url", "/data/" + name + ".txt"}, {"format", "txt"}, {"nodeName", node}}}};
}

TEST_CASE("a GM becomes ready, sends a Dataset to its node and writes the node's report") {
  fakes::FakeKubeClient api;
  Json d1 = *api.Create(api::resources::Datasets(), "default", DatasetObject("d1", "edge-a"));
  std::unique_ptr<Daemon> gm = StartDaemon(&api, "gm-a");
  REQUIRE(Eventually([&] { return gm->ready(); }));
  CHECK(gm->leading());

  // Health and metrics.
  CHECK(HttpGet(gm->http_port(), "/healthz").status == 200);
  CHECK(HttpGet(gm->http_port(), "/readyz").status == 200);
  testing::HttpResult metrics = HttpGet(gm->http_port(), "/metrics");
  CHECK(metrics.status == 200);
  CHECK(metrics.body.find("nereid_gm_leader 1") != std::string::npos);
  CHECK(metrics.body.find("nereid_edgehub_connected_nodes") != std::string::npos);
  CHECK(metrics.body.find("nereid_gm_workqueue_depth{controller=\"dataset\"}") != std::string::npos);
  CHECK(HttpGet(gm->http_port(), "/nope").status == 404);
  {
    // Slow clients in the cluster network (each sent half a request and waits) do not hold up
    // the kubelet's probes: the listener does not give each connection a thread.
    std::vector<nereid::testing::LoopbackConnection> slow;
    for (int i = 0; i < 300; ++i) {
      slow.emplace_back(gm->http_port());
      REQUIRE(slow.back().Send("GET /healthz HTTP/1.1\r\nHost: gm\r\n"));
    }
    CHECK(HttpGet(gm->http_port(), "/healthz").status == 200);
    CHECK(HttpGet(gm->http_port(), "/readyz").status == 200);
  }

  // The Lease names us.
  absl::StatusOr<Json> lease = api.Get(kube::resources::Leases(), "kube-system", "nereid-gm");
  REQUIRE(lease.ok());
  CHECK(kube::StringAt(*lease, "spec.holderIdentity") == "gm-a");

  // A node connects over mTLS and gets its Dataset (a created-later one too).
  TestNode node(gm->edge_port(), TestCerts(), "edge-a");
  node.Hello("edge-a");
  edge::v1::Change change = NextChangeSkippingControl(node);
  REQUIRE(change.has_upsert());
  CHECK(change.upsert().ref().name() == "d1");
  CHECK(change.upsert().ref().uid() == kube::Uid(d1));
  CHECK(change.upsert().version() == "1");
  CHECK(change.upsert().dataset().node_name() == "edge-a");
  node.Ack(change);
  api.Create(api::resources::Datasets(), "default", DatasetObject("d2", "edge-a")).IgnoreError();
  edge::v1::Change second = NextChangeSkippingControl(node);
  CHECK(second.upsert().ref().name() == "d2");
  node.Ack(second);

  // The node's report becomes status.numberOfSamples, then the ReportAck says ACCEPTED.
  edge::v1::StatusReport report = nereid::testing::DatasetReport(1, "d1", 1234);
  report.mutable_ref()->set_uid(kube::Uid(d1));
  node.Report(report);
  std::optional<edge::v1::ReportAck> ack = testing::NextReportAckSkipping(node);
  REQUIRE(ack.has_value());
  CHECK(ack->seq() == 1);
  CHECK(ack->result() == edge::v1::REPORT_ACCEPTED);
  Json stored = *api.Get(api::resources::Datasets(), "default", "d1");
  CHECK(stored["status"]["numberOfSamples"] == 1234);
  CHECK(gm->metrics().ReportCount("Dataset", ControllerMetrics::ReportResult::kAccepted) == 1);

  // A report about an object the node is not sent is refused by the hub.
  edge::v1::StatusReport foreign = nereid::testing::DatasetReport(2, "d9", 1);
  node.Report(foreign);
  ack = testing::NextReportAckSkipping(node);
  REQUIRE(ack.has_value());
  CHECK(ack->result() == edge::v1::REPORT_REJECTED);

  gm->Stop();
  // Graceful stop released the Lease and ended the node's stream.
  lease = api.Get(kube::resources::Leases(), "kube-system", "nereid-gm");
  REQUIRE(lease.ok());
  CHECK(kube::StringAt(*lease, "spec.holderIdentity").empty());
  CHECK(node.AwaitEnd().error_code() == grpc::StatusCode::UNAVAILABLE);
  CHECK(gm->Wait().ok());
}

TEST_CASE("two replicas: only the leader serves; the other takes over after a graceful stop") {
  fakes::FakeKubeClient api;
  api.Create(api::resources::Datasets(), "default", DatasetObject("d1", "edge-a")).IgnoreError();
  std::unique_ptr<Daemon> a = StartDaemon(&api, "gm-a");
  REQUIRE(Eventually([&] { return a->ready(); }));
  std::unique_ptr<Daemon> b = StartDaemon(&api, "gm-b");
  // b campaigns but does not lead: not ready, and its hub refuses streams with UNAVAILABLE.
  REQUIRE(Eventually([&] {
    return HttpGet(b->http_port(), "/readyz").body.find("leader: gm-a") != std::string::npos;
  }));
  CHECK(HttpGet(b->http_port(), "/readyz").status == 503);
  CHECK(HttpGet(b->http_port(), "/healthz").status == 200);
  CHECK_FALSE(b->leading());
  {
    TestNode refused(b->edge_port(), TestCerts(), "edge-a");
    refused.Hello("edge-a");
    grpc::Status status = refused.AwaitEnd();
    CHECK(status.error_code() == grpc::StatusCode::UNAVAILABLE);
    CHECK(status.error_message().find("not the leader") != std::string::npos);
  }
  CHECK(HttpGet(b->http_port(), "/metrics").body.find("nereid_gm_leader 0") != std::string::npos);

  // The leader stops (SIGTERM): it releases the Lease and b leads at its next retry.
  const absl::Time stopped_at = absl::Now();
  a->Stop();
  REQUIRE(Eventually([&] { return b->ready(); }, absl::Seconds(10)));
  const absl::Duration takeover = absl::Now() - stopped_at;
  CHECK(takeover < absl::Seconds(3));  // Within the lease duration: the release made it quick.
  TestNode node(b->edge_port(), TestCerts(), "edge-a");
  node.Hello("edge-a");
  edge::v1::Change change = NextChangeSkippingControl(node);
  CHECK(change.upsert().ref().name() == "d1");
  b->Stop();
}

TEST_CASE("a leader that cannot renew its Lease stops serving and Wait() reports it") {
  fakes::FakeKubeClient api;
  fakes::InterceptingKubeClient a_view(&api);
  std::unique_ptr<Daemon> a = StartDaemon(&a_view, "gm-a");
  REQUIRE(Eventually([&] { return a->ready(); }));
  TestNode node(a->edge_port(), TestCerts(), "edge-a");
  node.Hello("edge-a");
  REQUIRE(node.Next().has_value());  // HelloReply: the stream is up.

  // Partition a from the API server: renewals fail; after renew_deadline (2 s) it gives up.
  a_view.SetDown(true);
  std::optional<absl::Status> result = a->WaitFor(absl::Seconds(10));
  REQUIRE(result.has_value());
  CHECK(result->code() == absl::StatusCode::kAborted);
  CHECK(result->message().find("lost the leader Lease") != std::string::npos);
  CHECK_FALSE(a->ready());
  CHECK(HttpGet(a->http_port(), "/healthz").status == 500);
  CHECK(HttpGet(a->http_port(), "/readyz").status == 503);
  // Its node stream was finished so the node reconnects (to whoever leads now).
  CHECK(node.AwaitEnd().error_code() == grpc::StatusCode::UNAVAILABLE);

  // Another replica takes over once the Lease expires (3 s without renewal).
  std::unique_ptr<Daemon> b = StartDaemon(&api, "gm-b");
  REQUIRE(Eventually([&] { return b->ready(); }, absl::Seconds(15)));
  a->Stop();
  b->Stop();
}

TEST_CASE("without leader election the GM leads at once; bad listeners fail Start clearly") {
  fakes::FakeKubeClient api;
  GmConfig config = TestConfig("gm-solo");
  config.leader_election.enabled = false;
  DaemonOptions options;
  options.client = &api;
  auto gm = *Daemon::Create(config, options);
  REQUIRE(gm->Start().ok());
  REQUIRE(Eventually([&] { return gm->ready(); }));
  CHECK(api.CountActions(fakes::Verb::kGet, "leases.coordination.k8s.io") == 0);

  GmConfig busy = TestConfig("gm-busy");
  busy.http_listen = "127.0.0.1:" + std::to_string(gm->http_port());
  auto second = *Daemon::Create(busy, options);
  absl::Status started = second->Start();
  CHECK_FALSE(started.ok());
  CHECK(started.message().find("--http-listen") != std::string::npos);

  GmConfig bad_tls = TestConfig("gm-tls");
  bad_tls.tls.cert_file = "/nonexistent/gm.crt";
  auto third = *Daemon::Create(bad_tls, options);
  started = third->Start();
  CHECK_FALSE(started.ok());
  CHECK(started.message().find("/nonexistent/gm.crt") != std::string::npos);
  gm->Stop();
}

TEST_CASE("a GM with a backlog of Events stops within its drain limit, dropping the rest") {
  // Every Event takes 200 ms to send (an API server that throttles the GM to 5 q/s): 40 queued
  // ones would hold the stop for 8 s.
  fakes::FakeKubeClient api;
  fakes::InterceptingKubeClient throttled(&api);
  throttled.SetInterceptor(
      [](fakes::Verb verb, const kube::Resource& resource, const kube::ListOptions*) {
        if (verb == fakes::Verb::kCreate && resource.resource == "events") {
          absl::SleepFor(absl::Milliseconds(200));
        }
        return std::optional<absl::Status>();
      });
  constexpr int kDatasets = 40;
  for (int i = 0; i < kDatasets; ++i) {
    Json bad = DatasetObject("d" + std::to_string(i), "edge-a");
    bad["spec"].erase("format");  // Each gets a SpecValid=False status and an InvalidSpec Event.
    REQUIRE(api.Create(api::resources::Datasets(), "default", bad).ok());
  }
  GmConfig config = TestConfig("gm-drain");
  config.leader_election.enabled = false;
  config.event_drain_timeout_seconds = 1;
  DaemonOptions options;
  options.client = &throttled;
  options.shutdown_grace = absl::Seconds(1);
  auto gm = *Daemon::Create(config, options);
  REQUIRE(gm->Start().ok());
  REQUIRE(Eventually([&] {
    for (const Json& d : api.Objects(api::resources::Datasets())) {
      if (kube::FindPath(d, "status.conditions") == nullptr) return false;
    }
    return true;
  }));
  const absl::Time stop = absl::Now();
  gm->Stop();
  const absl::Duration took = absl::Now() - stop;
  INFO("stop took " << absl::FormatDuration(took));
  // The drain limit, one request under way and the rest of the stop; not the 8 s backlog.
  CHECK(took < absl::Seconds(3));
  CHECK(api.Objects(kube::resources::Events()).size() < kDatasets);
}

}  // namespace
}  // namespace nereid::gm
