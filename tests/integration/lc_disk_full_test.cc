// Integration, fault injection on the LC's disk: a real `localcontroller` whose
// SQLite database can no longer grow while a dataset it counts grows. The disk is made "full" with
// a file-size rlimit of 0 set on the running process (prlimit(2); every write to a regular file
// then fails with EFBIG, as a full disk fails with ENOSPC), so no mount or privilege is needed.
// Asserted: the LC stays up (SIGXFSZ would kill it), says so (/readyz 503 naming the database)
// and loses nothing: once the limit is lifted, the new count lands in `kubectl get` and the LC is
// ready again; the database passes PRAGMA integrity_check afterwards.

#include <sys/resource.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "absl/strings/match.h"
#include "common/store/sqlite_db.h"
#include "tests/integration/edge_cluster.h"
#include "tests/integration/loopback_helpers.h"

namespace nereid {
namespace {

using testing::AppendLines;
using testing::DatasetYaml;
using testing::EdgeCluster;
using testing::Lc;
using testing::WaitFor;

constexpr absl::Duration kPoll = testing::kEdgePoll;

// Sets the soft RLIMIT_FSIZE of process `pid` (the hard limit stays, so it can be raised back).
void SetFileSizeLimit(pid_t pid, rlim_t soft) {
  struct rlimit current {};
  REQUIRE(prlimit(pid, RLIMIT_FSIZE, nullptr, &current) == 0);
  struct rlimit next = current;
  next.rlim_cur = soft;
  REQUIRE(prlimit(pid, RLIMIT_FSIZE, &next, nullptr) == 0);
}

TEST_CASE("an LC whose disk is full says so, keeps its database sound and catches up after",
          "[integration][faults]") {
  EdgeCluster cluster(testing::BuiltEdgeBinaries(), "lc-disk-full-");
  const std::string data = cluster.dir().File("root-edge-a/data");
  std::filesystem::create_directories(data);
  AppendLines(data + "/a.txt", 1, 10);
  cluster.StartGm();
  Lc lc = cluster.StartNodeLc("edge-a");
  REQUIRE(WaitFor([&] { return lc.Synced(); }, absl::Seconds(20), kPoll));
  cluster.Kubectl({"apply", "-f", "-"}, DatasetYaml("da", "edge-a", "/data/a.txt"));
  REQUIRE(cluster.WaitSamples("da", 10, absl::Seconds(30)));
  REQUIRE(testing::HttpGet(lc.port, "/readyz").status == 200);

  // The disk fills up; the dataset grows (the LC rescans every second).
  SetFileSizeLimit(lc.process->pid(), 0);
  const absl::Time full_since = absl::Now();
  AppendLines(data + "/a.txt", 11, 20);
  testing::HttpReply ready;
  CHECK(WaitFor([&] { return (ready = testing::HttpGet(lc.port, "/readyz")).status == 503; },
                absl::Seconds(20), kPoll));
  INFO("/readyz: " << ready.body);
  CHECK(absl::StrContains(ready.body, "database"));
  const double noticed_seconds = absl::ToDoubleSeconds(absl::Now() - full_since);
  CHECK(lc.process->Running());  // not killed by SIGXFSZ
  CHECK(cluster.Samples("da") == 10);

  // Space returns: the count that could not be stored lands, and the LC is ready again.
  SetFileSizeLimit(lc.process->pid(), RLIM_INFINITY);
  const absl::Time space_since = absl::Now();
  CHECK(cluster.WaitSamples("da", 20, absl::Seconds(30)));
  const double landed_seconds = absl::ToDoubleSeconds(absl::Now() - space_since);
  CHECK(WaitFor([&] { return testing::HttpGet(lc.port, "/readyz").status == 200; },
                absl::Seconds(20), kPoll));
  CHECK(WaitFor([&] { return lc.OutboxDepth() == 0; }, absl::Seconds(20), kPoll));
  CHECK(lc.LocalSamples("da") == 20);
  CHECK(cluster.GmDatasetReports("rejected") == 0);
  const double failed_writes = testing::MetricValue(
      testing::HttpGet(lc.port, "/metrics").body, "nereid_lc_database_write_failures_total");
  CHECK(failed_writes > 0);
  WARN("lc disk full: /readyz 503 " << noticed_seconds << " s after the limit, "
                                    << failed_writes << " failed writes; the count landed "
                                    << landed_seconds << " s after space returned");

  auto stopped = lc.process->Stop(absl::Seconds(10));
  REQUIRE(stopped.ok());
  CHECK(*stopped == 0);
  auto db = store::Db::Open(cluster.dir().File("edge-a.db"));
  REQUIRE(db.ok());
  absl::Status integrity = (*db)->CheckIntegrity();
  INFO(integrity.ToString());
  CHECK(integrity.ok());
}

}  // namespace
}  // namespace nereid
