// Integration: "SIGKILL an LC during a scan -> after restart the count is right and nothing is
// reported twice that matters", made deterministic with the LC's test-only failpoints
// (common/failpoint/failpoint.h): devapiserver + the `globalmanager` binary + one `localcontroller`
// (mTLS), one txt Dataset. For each point a dataset growth passes on its way to the cluster —
//   lc-dataset-before-checkpoint  counted, nothing of the scan in SQLite,
//   lc-dataset-before-report      checkpoint committed, result and outbox report not,
//   lc-report-before-send         result and report committed, the report not sent,
//   lc-report-ack-before-commit   the GM wrote the count and ACKed, the LC did not yet drop the
//                                 report from its outbox —
// the LC is restarted with NEREID_FAILPOINTS=<point>=pause, the file grows, the test waits for the
// LC's "failpoint <point>: paused" line, checks the state is the one the point promises
// (kubectl's count, the LC's outbox depth), SIGKILLs the LC there, restarts it without the
// failpoint from the same database, and asserts: `kubectl get` and the LC's /api/v1/datasets show
// the real number of lines; the outbox drains; the GM accepted exactly one Dataset report from
// the restarted LC (the new count, or the resend of the unacked one) and refused none; and
// nothing more is sent during the next periodic scan. Runs in about 10 s.

#include <catch2/catch.hpp>
#include <csignal>
#include <filesystem>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/failpoint/failpoint.h"
#include "tests/integration/edge_cluster.h"
#include "tests/integration/loopback_helpers.h"
#include "tests/support/subprocess.h"

namespace nereid {
namespace {

using testing::AppendLines;
using testing::Contains;
using testing::Lc;
using testing::MetricValue;

constexpr absl::Duration kPoll = absl::Milliseconds(50);

testing::EdgeBinaries Binaries() {
  return {NEREID_DEVAPISERVER_BIN, NEREID_GM_BIN, NEREID_LC_BIN, NEREID_KUBECTL,
          NEREID_SOURCE_DIR};
}

// Scans the LC finished (its /metrics scan-duration summary count); -1 when unavailable.
double LcScans(const Lc& lc) {
  return MetricValue(testing::HttpGet(lc.port, "/metrics").body,
                     "nereid_lc_dataset_scan_duration_seconds_count");
}

struct CrashPoint {
  const char* name;
  // Whether the report of the grown count is in the LC's outbox when the LC stops at the point.
  bool in_outbox_before_kill;
  // Whether the GM already wrote the grown count then.
  bool in_cluster_before_kill;
};

TEST_CASE("an LC SIGKILLed at each failpoint of a dataset scan restarts to the right count, "
          "reported once",
          "[integration][lc-crash]") {
  testing::EdgeCluster cluster(Binaries(), "lc-crash-");
  const std::string file = cluster.dir().File("root-edge-a/data/a.txt");
  std::filesystem::create_directories(cluster.dir().File("root-edge-a/data"));
  int lines = 10;
  AppendLines(file, 1, lines);

  cluster.StartGm();
  Lc lc = cluster.StartNodeLc("edge-a");
  REQUIRE(testing::WaitFor([&] { return lc.Synced(); }, absl::Seconds(20), kPoll));
  cluster.Kubectl({"apply", "-f", "-"}, testing::DatasetYaml("da", "edge-a", "/data/a.txt"));
  REQUIRE(cluster.WaitSamples("da", lines, absl::Seconds(20)));
  REQUIRE(testing::WaitFor([&] { return lc.OutboxDepth() == 0; }, absl::Seconds(10), kPoll));

  for (const CrashPoint& point :
       {CrashPoint{failpoint::kLcDatasetBeforeCheckpoint, false, false},
        CrashPoint{failpoint::kLcDatasetBeforeReport, false, false},
        CrashPoint{failpoint::kLcReportBeforeSend, true, false},
        CrashPoint{failpoint::kLcReportAckBeforeCommit, true, true}}) {
    INFO("failpoint " << point.name);
    const std::string paused = absl::StrCat("failpoint ", point.name, ": paused");

    // Restart with the point armed; the restored dataset is unchanged, so nothing reaches it yet.
    auto stopped = lc.process->Stop(absl::Seconds(10));
    REQUIRE(stopped.ok());
    REQUIRE(*stopped == 0);
    lc = cluster.StartNodeLc("edge-a", {{failpoint::kEnvVar, absl::StrCat(point.name, "=pause")}});
    REQUIRE(testing::WaitFor(
        [&] {
          return Contains(lc.process->Stderr(), absl::StrCat("failpoint ", point.name, " armed"));
        },
        absl::Seconds(5), kPoll));
    REQUIRE(testing::WaitFor([&] { return lc.Synced() && lc.LocalSamples("da") == lines; },
                             absl::Seconds(20), kPoll));
    REQUIRE_FALSE(Contains(lc.process->Stderr(), paused));

    // The dataset grows; the scan that counts it stops at the point.
    const int before = lines;
    AppendLines(file, lines + 1, lines + 15);
    lines += 15;
    REQUIRE(testing::WaitFor([&] { return Contains(lc.process->Stderr(), paused); },
                             absl::Seconds(10), kPoll));
    // The state the point promises: the report is in the outbox from its commit until the ACK is
    // committed; the GM has the new count only once it ACKed.
    CHECK(cluster.Samples("da") == (point.in_cluster_before_kill ? lines : before));
    CHECK(lc.OutboxDepth() == (point.in_outbox_before_kill ? 1 : 0));

    const double accepted_before = cluster.GmDatasetReports("accepted");
    const double rejected_before = cluster.GmDatasetReports("rejected");
    REQUIRE(kill(lc.process->pid(), SIGKILL) == 0);
    auto killed = lc.process->Wait(absl::Seconds(10));
    REQUIRE(killed.ok());
    CHECK(*killed == 128 + SIGKILL);

    // Restarted without the failpoint, from the same database.
    lc = cluster.StartNodeLc("edge-a");
    CHECK_FALSE(Contains(lc.process->Stderr(), "armed"));
    REQUIRE(cluster.WaitSamples("da", lines, absl::Seconds(20)));
    REQUIRE(testing::WaitFor(
        [&] { return lc.Synced() && lc.OutboxDepth() == 0 && lc.LocalSamples("da") == lines; },
        absl::Seconds(10), kPoll));
    CHECK(lc.LinkCounter("reportsRejected") == 0);

    // One more periodic scan (1 s) passes without another report: no resend storm.
    const double scans = LcScans(lc);
    REQUIRE(scans >= 1);
    REQUIRE(testing::WaitFor([&] { return LcScans(lc) > scans; }, absl::Seconds(5), kPoll));
    CHECK(lc.LinkCounter("reportsSent") == 1);
    CHECK(lc.LinkCounter("reportsAcked") == 1);
    CHECK(cluster.GmDatasetReports("accepted") == accepted_before + 1);
    CHECK(cluster.GmDatasetReports("rejected") == rejected_before);
    CHECK(cluster.Samples("da") == lines);
  }

  auto code = lc.process->Stop(absl::Seconds(10));
  REQUIRE(code.ok());
  CHECK(*code == 0);
  cluster.StopGm();
}

}  // namespace
}  // namespace nereid
