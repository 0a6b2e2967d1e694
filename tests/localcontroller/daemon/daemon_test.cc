// A whole LocalController in-process against the real GM edge hub over mutual TLS (certificates
// from scripts/gen-certs.sh), with its REST server on 127.0.0.1.

#include "localcontroller/daemon.h"

#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "httplib.h"
#include "localcontroller/cloudlink/lc_db_adapter.h"
#include "localcontroller/dataset/dataset_monitor.h"
#include "localcontroller/model/model_verifier.h"
#include "nlohmann/json.hpp"
#include "tests/localcontroller/daemon/test_gm.h"
#include "tests/localcontroller/dataset/temp_dir.h"

namespace nereid::lc {
namespace {

namespace v1 = edge::v1;
using dataset::testing::TempDir;
using Json = nlohmann::json;
using ::nereid::lc::testing::DatasetCount;
using ::nereid::lc::testing::DatasetResource;
using ::nereid::fakes::Eventually;
using ::nereid::lc::testing::Gm;
using ::nereid::lc::testing::kDaemonWait;
using ::nereid::lc::testing::JointInferenceResource;
using ::nereid::lc::testing::ModelResource;
using ::nereid::lc::testing::TestCerts;

struct Lc {
  std::unique_ptr<Daemon> daemon;
  std::unique_ptr<httplib::Client> client;

  Lc(const TempDir& dir, const std::string& gm_address) {
    LcConfig config;
    config.node_name = "edge-a";
    config.gm_address = gm_address;
    config.db_path = dir.Path("state/lc.db");
    config.host_root = dir.Path("root");
    config.listen = "127.0.0.1:0";
    config.tls = TestCerts().ClientTls("edge-a");
    DaemonOptions options;
    options.dataset_min_interval = absl::ZeroDuration();
    options.link_backoff = ExponentialBackoff::Options{absl::Milliseconds(100), 1.6,
                                                       absl::Milliseconds(500), 0.2};
    auto created = Daemon::Create(config, options);
    INFO(created.status());
    REQUIRE(created.ok());
    daemon = std::move(*created);
    absl::Status started = daemon->Start();
    INFO(started);
    REQUIRE(started.ok());
    client = std::make_unique<httplib::Client>("127.0.0.1", daemon->port());
    client->set_read_timeout(10, 0);
  }

  Json Get(const std::string& path, int want_status = 200) {
    httplib::Result result = client->Get(path.c_str());
    REQUIRE(result);
    INFO(path << " -> " << result->body);
    CHECK(result->status == want_status);
    Json j = Json::parse(result->body, nullptr, false);
    REQUIRE_FALSE(j.is_discarded());
    return j;
  }
  bool Synced() { return daemon->link_status().synced; }
};

TEST_CASE("a Dataset sent by the hub is counted and its report reaches the GM",
          "[lc][daemon][e2e]") {
  TempDir dir;
  dir.Write("root/data/train.txt", "a\nb\nc\n");
  Gm gm;
  REQUIRE(gm.hub->Upsert("edge-a", DatasetResource("ds1", "v1", "/data/train.txt")).ok());
  gm.hub->MarkSynced();
  Lc lc(dir, gm.address());

  std::optional<v1::StatusReport> first = gm.handler.WaitFor(DatasetCount("ds1", 3));
  REQUIRE(first.has_value());
  CHECK(first->ref().kind() == "Dataset");
  CHECK(first->ref().namespace_() == "default");
  CHECK(first->ref().uid() == "uid-ds1");
  CHECK(first->observed_version() == "v1");
  CHECK(first->dataset().update_time().seconds() > 0);
  // ACKed by the GM: the outbox drains.
  CHECK(Eventually([&] { return *lc.daemon->db().OutboxDepth() == 0; }, kDaemonWait));

  Json ds = lc.Get("/api/v1/datasets/default/ds1");
  CHECK(ds["status"]["numberOfSamples"] == 3);
  CHECK(ds["spec"]["url"] == "/data/train.txt");
  CHECK(ds["uid"] == "uid-ds1");
  CHECK(ds["version"] == "v1");

  // Growth is seen (inotify) and reported.
  dir.Append("root/data/train.txt", "d\ne\n");
  REQUIRE(gm.handler.WaitFor(DatasetCount("ds1", 5)).has_value());

  // A new spec from the GM is committed, applied (rescan of the new file) and reported.
  dir.Write("root/data/other.txt", "x\n");
  REQUIRE(gm.hub->Upsert("edge-a", DatasetResource("ds1", "v2", "/data/other.txt")).ok());
  std::optional<v1::StatusReport> moved = gm.handler.WaitFor(DatasetCount("ds1", 1));
  REQUIRE(moved.has_value());
  CHECK(moved->observed_version() == "v2");

  // Deleted and re-created under the same name with the same spec (a new uid): the new object
  // gets its own first report, although the count did not change.
  v1::Resource recreated = DatasetResource("ds1", "v3", "/data/other.txt");
  recreated.mutable_ref()->set_uid("uid-ds1-second");
  REQUIRE(gm.hub->Upsert("edge-a", recreated).ok());
  std::optional<v1::StatusReport> fresh = gm.handler.WaitFor([](const v1::StatusReport& r) {
    return r.has_dataset() && r.ref().uid() == "uid-ds1-second";
  });
  REQUIRE(fresh.has_value());
  CHECK(fresh->dataset().number_of_samples() == 1);
  CHECK(fresh->observed_version() == "v3");

  // An error is reported with its reason.
  REQUIRE(gm.hub->Upsert("edge-a", DatasetResource("ds2", "1", "/data/missing.txt")).ok());
  std::optional<v1::StatusReport> missing = gm.handler.WaitFor([](const v1::StatusReport& r) {
    return r.has_dataset() && r.ref().name() == "ds2" && !r.dataset().error_reason().empty();
  });
  REQUIRE(missing.has_value());
  CHECK(missing->dataset().error_reason() == "PathNotFound");
  Json ds2 = lc.Get("/api/v1/datasets/default/ds2");
  CHECK(ds2["status"]["errorReason"] == "PathNotFound");
  CHECK(ds2["status"]["numberOfSamples"].is_null());

  Json status = lc.Get("/api/v1/status");
  CHECK(status["node"] == "edge-a");
  CHECK(status["cloudLink"]["state"] == "connected");
  CHECK(status["cloudLink"]["synced"] == true);
  CHECK(status["cloudLink"]["lastSyncTime"].is_string());
  CHECK(status["datasets"] == 2);
  CHECK(lc.Get("/readyz")["status"] == "ok");

  REQUIRE(Eventually([&] { return *lc.daemon->db().OutboxDepth() == 0; }, kDaemonWait));
  httplib::Result metrics = lc.client->Get("/metrics");
  REQUIRE(metrics);
  CHECK_THAT(metrics->body, Catch::Contains("nereid_lc_datasets_tracked 2"));
  CHECK_THAT(metrics->body, Catch::Contains("nereid_lc_cloud_link_state{state=\"connected\"} 1"));
  CHECK_THAT(metrics->body, Catch::Contains("nereid_lc_reports_total{result=\"acked\"}"));
  CHECK_THAT(metrics->body, Catch::Contains("# TYPE nereid_lc_dataset_scan_duration_seconds summary"));
  CHECK_THAT(metrics->body, Catch::Contains("nereid_lc_dataset_scan_duration_seconds_count"));
  CHECK_THAT(metrics->body, Catch::Contains("nereid_lc_outbox_depth 0"));
  CHECK_THAT(metrics->body, Catch::Contains("nereid_lc_http_requests_total{code=\"200\"}"));

  // Removal: dropped from the database and no longer monitored.
  REQUIRE(gm.hub->Remove("edge-a", DatasetResource("ds2", "1", "").ref()).ok());
  CHECK(Eventually([&] { return lc.daemon->monitor().size() == 1; }, kDaemonWait));
  CHECK(absl::IsNotFound(lc.daemon->db().Get(ToDbRef(DatasetResource("ds2", "1", "").ref())).status()));
  lc.Get("/api/v1/datasets/default/ds2", 404);
}

TEST_CASE("a worker report POSTed to the LC's REST reaches the GM's handler",
          "[lc][daemon][e2e]") {
  TempDir dir;
  Gm gm;
  REQUIRE(gm.hub->Upsert("edge-a", JointInferenceResource("helmet")).ok());
  gm.hub->MarkSynced();
  Lc lc(dir, gm.address());
  REQUIRE(Eventually([&] { return lc.Synced(); }, kDaemonWait));

  const std::string body =
      R"({"name":"edgeworker-1","namespace":"default","ownerName":"helmet",)"
      R"("ownerKind":"jointinferenceservice","kind":"inference","status":"running",)"
      R"("ownerInfo":{"inferenceNumber":10,"hardExampleNumber":2},"results":[]})";
  httplib::Result posted = lc.client->Post("/sedna/workers/edgeworker-1/info", body,
                                           "application/json");
  REQUIRE(posted);
  CHECK(posted->status == 200);
  CHECK(Json::parse(posted->body) == Json{{"Status", 200}, {"Message", "OK"}});

  std::optional<v1::StatusReport> report = gm.handler.WaitFor(
      [](const v1::StatusReport& r) { return r.has_worker(); });
  REQUIRE(report.has_value());
  CHECK(report->ref().kind() == "JointInferenceService");
  CHECK(report->ref().name() == "helmet");
  CHECK(report->ref().uid() == "uid-helmet");
  CHECK(report->observed_version() == "7");
  CHECK(report->worker().worker_name() == "edgeworker-1");
  CHECK(report->worker().status() == "running");
  CHECK(Json::parse(report->worker().owner_info_json())["inferenceNumber"] == 10);
  CHECK(Eventually([&] { return *lc.daemon->db().OutboxDepth() == 0; }, kDaemonWait));

  Json workers = lc.Get("/api/v1/workers");
  REQUIRE(workers["items"].size() == 1);
  CHECK(workers["items"][0]["forwarded"] == true);
}

TEST_CASE("a Model is verified and its status reaches the GM", "[lc][daemon][e2e]") {
  TempDir dir;
  dir.Write("root/models/m.pb", "model-bytes");
  const std::string sha = model::Sha256Hex("model-bytes");
  Gm gm;
  REQUIRE(gm.hub->Upsert("edge-a", ModelResource("m1", "/models/m.pb", sha)).ok());
  REQUIRE(gm.hub->Upsert("edge-a", ModelResource("m2", "/models/m.pb", std::string(64, '0')))
              .ok());
  gm.hub->MarkSynced();
  Lc lc(dir, gm.address());

  std::optional<v1::StatusReport> ok = gm.handler.WaitFor(
      [](const v1::StatusReport& r) { return r.has_model() && r.ref().name() == "m1"; });
  REQUIRE(ok.has_value());
  CHECK(ok->model().verified());
  CHECK(ok->model().sha256() == sha);
  CHECK(ok->ref().uid() == "uid-m1");
  std::optional<v1::StatusReport> bad = gm.handler.WaitFor(
      [](const v1::StatusReport& r) { return r.has_model() && r.ref().name() == "m2"; });
  REQUIRE(bad.has_value());
  CHECK_FALSE(bad->model().verified());
  CHECK(bad->model().error_reason() == "ChecksumMismatch");

  Json m1 = lc.Get("/api/v1/models/default/m1");
  CHECK(m1["status"]["verified"] == true);
  CHECK(m1["status"]["sha256"] == sha);
  CHECK(m1["status"]["size"] == 11);
  CHECK(lc.Get("/api/v1/models")["items"].size() == 2);
  lc.Get("/api/v1/models/default/nope", 404);
}

TEST_CASE("restarted with the GM away, the LC serves and counts its datasets from the database",
          "[lc][daemon][e2e]") {
  TempDir dir;
  dir.Write("root/data/train.txt", "a\nb\nc\n");
  Gm gm;
  REQUIRE(gm.hub->Upsert("edge-a", DatasetResource("ds1", "v1", "/data/train.txt")).ok());
  gm.hub->MarkSynced();
  {
    Lc lc(dir, gm.address());
    REQUIRE(gm.handler.WaitFor(DatasetCount("ds1", 3)).has_value());
    REQUIRE(Eventually([&] { return *lc.daemon->db().OutboxDepth() == 0; }, kDaemonWait));
  }
  const int port = gm.port();
  gm.Stop();

  // The cloud is gone; the LC starts from its database alone.
  Lc lc(dir, "127.0.0.1:" + std::to_string(port));
  Json ds = lc.Get("/api/v1/datasets/default/ds1");
  CHECK(ds["status"]["numberOfSamples"] == 3);
  CHECK(ds["status"]["lastScanTime"].is_string());
  CHECK(lc.Get("/readyz")["status"] == "ok");
  CHECK(lc.daemon->monitor().size() == 1);
  // The unchanged dataset is not reported again after the restart.
  REQUIRE(Eventually([&] { return lc.daemon->monitor().stats().scans >= 1; }, kDaemonWait));
  CHECK(*lc.daemon->db().OutboxDepth() == 0);

  dir.Append("root/data/train.txt", "d\n");
  CHECK(Eventually([&] {
    Json j = lc.Get("/api/v1/datasets/default/ds1");
    return j["status"]["numberOfSamples"] == 4;
  }, kDaemonWait));
  CHECK(Eventually([&] { return *lc.daemon->db().OutboxDepth() == 1; }, kDaemonWait));
  Json status = lc.Get("/api/v1/status");
  CHECK(status["cloudLink"]["state"] != "connected");
  CHECK(status["cloudLink"]["lastSyncTime"].is_string());  // the sync before the restart
  CHECK(status["outboxDepth"] == 1);

  // The GM comes back on the same address: the pending report is delivered.
  gm.Start(port);
  REQUIRE(gm.hub->Upsert("edge-a", DatasetResource("ds1", "v1", "/data/train.txt")).ok());
  gm.hub->MarkSynced();
  REQUIRE(gm.handler.WaitFor(DatasetCount("ds1", 4)).has_value());
  CHECK(Eventually([&] { return *lc.daemon->db().OutboxDepth() == 0; }, kDaemonWait));
  // Across both runs the count 3 was reported once: no resend storm after the restart.
  CHECK(gm.handler.Count(DatasetCount("ds1", 3)) == 1);
}

TEST_CASE("the daemon refuses another node's database and bad configuration", "[lc][daemon]") {
  TempDir dir;
  dir.Mkdir("root");
  LcConfig config;
  config.node_name = "edge-a";
  config.gm_address = "127.0.0.1:1";
  config.db_path = dir.Path("lc.db");
  config.host_root = dir.Path("root");
  config.listen = "127.0.0.1:0";
  config.tls.insecure = true;
  {
    auto daemon = Daemon::Create(config);
    REQUIRE(daemon.ok());
  }
  LcConfig other = config;
  other.node_name = "edge-b";
  absl::StatusOr<std::unique_ptr<Daemon>> refused = Daemon::Create(other);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(std::string(refused.status().message()), Catch::Contains(config.db_path));

  LcConfig no_tls = config;
  no_tls.tls.insecure = false;
  CHECK(Daemon::Create(no_tls).status().code() == absl::StatusCode::kInvalidArgument);

  // A certificate for another node than --node is refused before anything starts.
  LcConfig wrong_cert = config;
  wrong_cert.tls = TestCerts().ClientTls("edge-b");
  CHECK_FALSE(Daemon::Create(wrong_cert).ok());

  // A busy REST port fails Start with a clear error and leaves nothing running.
  auto first = Daemon::Create(config);
  REQUIRE(first.ok());
  REQUIRE((*first)->Start().ok());
  CHECK((*first)->running());
  LcConfig second_config = config;
  second_config.db_path = dir.Path("second.db");
  second_config.listen = "127.0.0.1:" + std::to_string((*first)->port());
  auto second = Daemon::Create(second_config);
  REQUIRE(second.ok());
  absl::Status busy = (*second)->Start();
  CHECK(busy.code() == absl::StatusCode::kUnavailable);
  CHECK_THAT(std::string(busy.message()), Catch::Contains("--listen"));
  CHECK_FALSE((*second)->running());
  (*first)->Stop();
  CHECK_FALSE((*first)->running());
}

}  // namespace
}  // namespace nereid::lc
