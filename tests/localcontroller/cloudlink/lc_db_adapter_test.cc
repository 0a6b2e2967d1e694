#include "localcontroller/cloudlink/lc_db_adapter.h"

#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <memory>
#include <string>

#include "globalmanager/edgehub/edge_hub.h"
#include "globalmanager/edgehub/server.h"
#include "localcontroller/cloudlink/cloud_link.h"
#include "tests/common/net/test_certs.h"
#include "tests/fakes/eventually.h"
#include "tests/globalmanager/edgehub/fake_report_handler.h"
#include "tests/globalmanager/edgehub/test_node.h"

namespace nereid::lc {
namespace {

namespace v1 = edge::v1;
using ::nereid::testing::DatasetReport;
using ::nereid::testing::DatasetResource;
using ::nereid::testing::TestCerts;

struct TempDir {
  std::string path;
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "nereid-lcdb-XXXXXX").string();
    REQUIRE(mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};

std::unique_ptr<db::LcDatabase> OpenDb(const TempDir& dir) {
  db::LcDatabase::Options options;
  options.path = dir.path + "/lc.db";
  options.node_name = "edge-a";
  auto opened = db::LcDatabase::Open(options);
  REQUIRE(opened.ok());
  return std::move(*opened);
}

using fakes::Eventually;

// Effects that cross threads and the network get longer than Eventually's default.
constexpr absl::Duration kLinkWait = absl::Seconds(15);

TEST_CASE("reports are keyed for the outbox by object, payload type and sub key",
          "[cloudlink][db]") {
  v1::StatusReport dataset = DatasetReport(0, "ds", 3);
  auto encoded = EncodeReport(dataset);
  REQUIRE(encoded.ok());
  CHECK(encoded->key.report_type == db::kReportDatasetStatus);
  CHECK(encoded->key.sub_key.empty());
  CHECK(encoded->observed_version == "1");

  v1::StatusReport worker;
  worker.mutable_ref()->set_kind("JointInferenceService");
  worker.mutable_ref()->set_namespace_("default");
  worker.mutable_ref()->set_name("helmet");
  worker.mutable_worker()->set_worker_name("helmet-edge-xyz");
  worker.mutable_worker()->set_owner_info_json(R"({"inferenceNumber":3})");
  encoded = EncodeReport(worker);
  REQUIRE(encoded.ok());
  CHECK(encoded->key.report_type == db::kReportWorker);
  CHECK(encoded->key.sub_key == "helmet-edge-xyz");

  v1::StatusReport trigger = worker;
  trigger.mutable_trigger()->set_stage("Train");
  encoded = EncodeReport(trigger);
  REQUIRE(encoded.ok());
  CHECK(encoded->key.report_type == db::kReportTrigger);
  CHECK(encoded->key.sub_key == "Train");

  v1::StatusReport empty = dataset;
  empty.clear_payload();
  CHECK(absl::IsInvalidArgument(EncodeReport(empty).status()));
}

TEST_CASE("outbox entries decode back into reports; undecodable ones are dropped",
          "[cloudlink][db]") {
  TempDir dir;
  auto db = OpenDb(dir);
  v1::StatusReport report = DatasetReport(0, "ds", 3);
  report.mutable_ref()->set_uid("u1");
  auto seq = EnqueueReport(*db, report);
  REQUIRE(seq.ok());
  db::OutboxKey bad_key{{"Dataset", "default", "broken", ""}, db::kReportDatasetStatus, ""};
  REQUIRE(db->Enqueue(bad_key, "1", std::string("\x0a\xff", 2)).ok());

  LcDbReportSource source(db.get());
  auto pending = source.Pending(10, 0);
  REQUIRE(pending.ok());
  REQUIRE(pending->size() == 1);
  CHECK((*pending)[0].seq() == static_cast<uint64_t>(*seq));
  CHECK((*pending)[0].ref().uid() == "u1");
  CHECK((*pending)[0].dataset().number_of_samples() == 3);
  auto depth = db->OutboxDepth();
  REQUIRE(depth.ok());
  CHECK(*depth == 1);  // the broken one was rejected
}

TEST_CASE("the link over the SQLite database: apply, commit, ACK and report", "[cloudlink][db]") {
  TempDir dir;
  auto db = OpenDb(dir);
  // Held from an earlier run: must be removed by the resync.
  REQUIRE(db->Upsert({"Dataset", "default", "stale", ""}, "1",
                     DatasetResource("stale", "1", "edge-a").SerializeAsString())
              .ok());

  gm::testing::FakeReportHandler handler;
  gm::EdgeHub::Options hub_options;
  hub_options.report_handler = &handler;
  gm::EdgeHub hub(hub_options);
  gm::EdgeHubServerOptions server_options;
  server_options.listen = "127.0.0.1:0";
  server_options.tls = TestCerts().ServerTls();
  auto server = gm::EdgeHubServer::Start(&hub, server_options);
  REQUIRE(server.ok());
  const v1::Resource wanted = DatasetResource("ds1", "7", "edge-a", "uid-1");
  REQUIRE(hub.Upsert("edge-a", wanted).ok());
  hub.MarkSynced();

  auto seq = EnqueueReport(*db, DatasetReport(0, "ds1", 9));
  REQUIRE(seq.ok());
  LcDbDesiredStateStore store(db.get());
  LcDbReportSource reports(db.get());
  CloudLinkOptions options;
  options.gm_address = "127.0.0.1:" + std::to_string((*server)->port());
  options.node_name = "edge-a";
  options.tls = TestCerts().ClientTls("edge-a");
  auto link = CloudLink::Create(options, &store, &reports);
  REQUIRE(link.ok());
  (*link)->Start();

  REQUIRE(Eventually([&] { return (*link)->status().synced; }, kLinkWait));
  auto stored = db->Get({"Dataset", "default", "ds1", ""});
  REQUIRE(stored.ok());
  CHECK(stored->version == "7");
  CHECK(stored->ref.uid == "uid-1");
  auto decoded = DecodeDesiredObject(*stored);
  REQUIRE(decoded.ok());
  CHECK(decoded->SerializeAsString() == wanted.SerializeAsString());
  CHECK(absl::IsNotFound(db->Get({"Dataset", "default", "stale", ""}).status()));
  auto last_sync = db->LastSync();
  REQUIRE(last_sync.ok());
  CHECK(last_sync->has_value());

  gm::testing::FakeReportHandler::Call& call = handler.WaitForCall(1);
  CHECK(call.report->seq() == static_cast<uint64_t>(*seq));
  CHECK(call.report->dataset().number_of_samples() == 9);
  call.done(gm::ReportOutcome::Accepted());
  CHECK(Eventually([&] {
    auto depth = db->OutboxDepth();
    return depth.ok() && *depth == 0;
  }, kLinkWait));
  (*link)->Stop();
  (*server)->Stop(absl::Seconds(1));
}

}  // namespace
}  // namespace nereid::lc
