// The real `localcontroller` binary: SIGKILLed in the middle of a scan while the GM is away,
// restarted, its database checked, and every pending report delivered once the GM is reachable.

#include <signal.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "httplib.h"
#include "localcontroller/cloudlink/lc_db_adapter.h"
#include "localcontroller/db/lc_database.h"
#include "nlohmann/json.hpp"
#include "tests/localcontroller/daemon/test_gm.h"
#include "tests/localcontroller/dataset/temp_dir.h"
#include "tests/localcontroller/dataset/test_http_server.h"
#include "tests/support/subprocess.h"

namespace nereid::lc {
namespace {

namespace v1 = edge::v1;
using ::nereid::lc::dataset::testing::TempDir;
using ::nereid::lc::dataset::testing::TestServer;
using ::nereid::lc::testing::DatasetCount;
using ::nereid::lc::testing::DatasetResource;
using ::nereid::fakes::Eventually;
using ::nereid::lc::testing::Gm;
using ::nereid::lc::testing::kDaemonWait;
using ::nereid::lc::testing::TestCerts;
using ::nereid::testing::ListenUrl;
using ::nereid::testing::Subprocess;
using Json = nlohmann::json;

constexpr int kSlowLines = 1000;

// An LC process for node edge-a.
class LcProcess {
 public:
  LcProcess(const TempDir& dir, const std::string& gm_address) {
    Subprocess::Options options;
    options.argv = {NEREID_LC_BINARY,
                    "--node", "edge-a",
                    "--gm", gm_address,
                    "--db", dir.Path("state/lc.db"),
                    "--host-root", dir.Path("root"),
                    "--listen", "127.0.0.1:0",
                    "--tls-ca", TestCerts().ca,
                    "--tls-cert", TestCerts().NodeCert("edge-a"),
                    "--tls-key", TestCerts().NodeKey("edge-a")};
    auto started = Subprocess::Start(std::move(options));
    REQUIRE(started.ok());
    process_ = std::move(*started);
    absl::StatusOr<std::string> line = process_->ReadLine(absl::Seconds(20));
    INFO(line.status());
    REQUIRE(line.ok());
    const std::string url = ListenUrl(*line);
    INFO(*line);
    REQUIRE(!url.empty());
    client_ = std::make_unique<httplib::Client>(url);
    client_->set_read_timeout(10, 0);
  }

  Json Get(const std::string& path) {
    httplib::Result result = client_->Get(path.c_str());
    if (!result || result->status != 200) return Json();
    return Json::parse(result->body, nullptr, false);
  }
  int64_t OutboxDepth() {
    Json status = Get("/api/v1/status");
    return status.is_object() ? status.value("outboxDepth", int64_t{-1}) : -1;
  }
  Subprocess& process() { return *process_; }

 private:
  std::unique_ptr<Subprocess> process_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_CASE("SIGKILL during a scan with the GM away: nothing is lost, nothing resent twice",
          "[lc][daemon][process]") {
  TempDir dir;
  dir.Write("root/data/a.txt", "1\n2\n3\n");
  dir.Write("root/data/b.txt", "1\n2\n3\n4\n5\n");

  // An http dataset whose first download stalls half-way until released: the scanner is inside
  // that scan when the LC is killed. Later downloads are served at once.
  TestServer http;
  std::atomic<bool> stall{true};
  std::atomic<int> stalled_requests{0};
  http.server().Get("/slow.txt", [&](const httplib::Request&, httplib::Response& response) {
    const bool stall_this = stall.exchange(false);
    response.set_chunked_content_provider(
        "text/plain", [&, stall_this](size_t offset, httplib::DataSink& sink) {
          std::string half;
          for (int i = 0; i < kSlowLines / 2; ++i) half += "line\n";
          if (!sink.write(half.data(), half.size())) return false;
          if (stall_this) {
            ++stalled_requests;
            // Bounded: the test releases it long before.
            http.release().WaitForNotificationWithTimeout(absl::Seconds(60));
            return false;  // the LC is gone by now
          }
          if (!sink.write(half.data(), half.size())) return false;
          sink.done();
          return true;
        });
  });

  // The node's desired state is already in its database (as a previous GM sync left it).
  const std::vector<v1::Resource> datasets = {
      DatasetResource("a", "1", "/data/a.txt"), DatasetResource("b", "1", "/data/b.txt"),
      DatasetResource("slow", "1", http.Url("/slow.txt"))};
  {
    db::LcDatabase::Options options;
    options.path = dir.Path("state/lc.db");
    options.node_name = "edge-a";
    auto db = db::LcDatabase::Open(options);
    REQUIRE(db.ok());
    LcDbDesiredStateStore store(db->get());
    for (const v1::Resource& r : datasets) REQUIRE(store.Upsert(r).ok());
  }

  // A GM address where nothing listens yet (reserved by a GM that stops again).
  Gm gm;
  const int port = gm.port();
  gm.Stop();

  {
    LcProcess lc(dir, gm.address());
    // a and b are counted and queued; the scanner is stuck in the slow download.
    REQUIRE(Eventually([&] { return stalled_requests.load() == 1 && lc.OutboxDepth() == 2; },
                       absl::Seconds(30)));
    REQUIRE(kill(lc.process().pid(), SIGKILL) == 0);
    absl::StatusOr<int> code = lc.process().Wait(absl::Seconds(10));
    REQUIRE(code.ok());
    CHECK(*code == 128 + SIGKILL);
  }
  http.release().Notify();

  // The database after the crash: consistent, desired state intact, both reports pending.
  {
    db::LcDatabase::Options options;
    options.path = dir.Path("state/lc.db");
    options.node_name = "edge-a";
    auto db = db::LcDatabase::Open(options);
    REQUIRE(db.ok());
    CHECK((*db)->CheckIntegrity().ok());
    CHECK((*db)->Inventory()->size() == 3);
    absl::StatusOr<std::vector<db::OutboxEntry>> pending = (*db)->Pending(10);
    REQUIRE(pending.ok());
    REQUIRE(pending->size() == 2);
    std::map<std::string, int64_t> counts;
    for (const db::OutboxEntry& entry : *pending) {
      absl::StatusOr<v1::StatusReport> report = DecodeReport(entry);
      REQUIRE(report.ok());
      counts[report->ref().name()] = report->dataset().number_of_samples();
      CHECK(report->ref().uid() == "uid-" + report->ref().name());
    }
    CHECK(counts == std::map<std::string, int64_t>{{"a", 3}, {"b", 5}});
    CHECK((*db)->GetDatasetResult("default", "a")->count == 3);
    CHECK(absl::IsNotFound((*db)->GetDatasetResult("default", "slow").status()));
  }

  // Restarted, still without a GM: the interrupted scan is done again, a and b are not
  // re-queued (their results match what is pending).
  LcProcess lc(dir, gm.address());
  REQUIRE(Eventually(
      [&] {
        Json slow = lc.Get("/api/v1/datasets/default/slow");
        return slow.is_object() && slow["status"]["numberOfSamples"] == kSlowLines;
      },
      absl::Seconds(30)));
  CHECK(Eventually([&] { return lc.OutboxDepth() == 3; }, kDaemonWait));
  CHECK(lc.Get("/api/v1/datasets/default/a")["status"]["numberOfSamples"] == 3);

  // The GM becomes reachable: everything pending is delivered, each report once.
  gm.Start(port);
  for (const v1::Resource& r : datasets) REQUIRE(gm.hub->Upsert("edge-a", r).ok());
  gm.hub->MarkSynced();
  REQUIRE(gm.handler.WaitFor(DatasetCount("a", 3)).has_value());
  REQUIRE(gm.handler.WaitFor(DatasetCount("b", 5)).has_value());
  REQUIRE(gm.handler.WaitFor(DatasetCount("slow", kSlowLines)).has_value());
  CHECK(Eventually([&] { return lc.OutboxDepth() == 0; }, kDaemonWait));
  CHECK(gm.handler.Count(DatasetCount("a", 3)) == 1);
  CHECK(gm.handler.Count(DatasetCount("b", 5)) == 1);
  CHECK(gm.handler.Count(DatasetCount("slow", kSlowLines)) == 1);

  // A clean stop on SIGTERM.
  absl::StatusOr<int> code = lc.process().Stop(absl::Seconds(10));
  REQUIRE(code.ok());
  CHECK(*code == 0);
}

TEST_CASE("the binary refuses a bad command line with a clear message", "[lc][daemon][process]") {
  absl::StatusOr<nereid::testing::CommandResult> result = nereid::testing::RunCommand(
      {NEREID_LC_BINARY, "--node", "edge-a", "--gm", "127.0.0.1:9000"}, absl::Seconds(20));
  REQUIRE(result.ok());
  CHECK(result->exit_code == 2);
  CHECK_THAT(result->err, Catch::Contains("--tls-ca") && Catch::Contains("--insecure"));

  result = nereid::testing::RunCommand({NEREID_LC_BINARY, "--help"}, absl::Seconds(20));
  REQUIRE(result.ok());
  CHECK(result->exit_code == 0);
  CHECK_THAT(result->out, Catch::Contains("--host-root"));
}

}  // namespace
}  // namespace nereid::lc
