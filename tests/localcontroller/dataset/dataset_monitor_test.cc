#include "localcontroller/dataset/dataset_monitor.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/time/fake_clock.h"
#include "localcontroller/dataset/errors.h"
#include "localcontroller/dataset/inotify_watcher.h"
#include "tests/fakes/eventually.h"
#include "tests/localcontroller/dataset/temp_dir.h"
#include "tests/localcontroller/dataset/test_http_server.h"

namespace nereid::lc::dataset {
namespace {

using fakes::Eventually;
using testing::TempDir;

// Collects reports; waits on conditions with a real-time deadline (the scanner runs on its own
// thread even when time is fake).
class Reports {
 public:
  // While failing, reports and checkpoints are refused (a full disk) and counted as refused.
  absl::Status Add(const ScanReport& report) {
    absl::MutexLock lock(&mu_);
    if (failing_) return Refuse();
    reports_.push_back(report);
    return absl::OkStatus();
  }
  absl::Status AddCheckpoint(const std::string& key, const std::string& data) {
    absl::MutexLock lock(&mu_);
    if (failing_) return Refuse();
    checkpoints_[key] = data;
    return absl::OkStatus();
  }
  void SetFailing(bool failing) {
    absl::MutexLock lock(&mu_);
    failing_ = failing;
  }
  int refused() {
    absl::MutexLock lock(&mu_);
    return refused_;
  }
  // Waits until there are at least `n` reports; returns the n-th.
  ScanReport WaitFor(size_t n, absl::Duration timeout = absl::Seconds(10)) {
    absl::MutexLock lock(&mu_);
    auto ready = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return reports_.size() >= n; };
    mu_.AwaitWithTimeout(absl::Condition(&ready), timeout);
    REQUIRE(reports_.size() >= n);
    return reports_[n - 1];
  }
  size_t size() {
    absl::MutexLock lock(&mu_);
    return reports_.size();
  }
  std::string checkpoint(const std::string& key) {
    absl::MutexLock lock(&mu_);
    return checkpoints_[key];
  }

 private:
  absl::Mutex mu_;
  std::vector<ScanReport> reports_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::string> checkpoints_ ABSL_GUARDED_BY(mu_);
  bool failing_ ABSL_GUARDED_BY(mu_) = false;
  int refused_ ABSL_GUARDED_BY(mu_) = 0;

  absl::Status Refuse() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    ++refused_;
    return absl::ResourceExhaustedError("database or disk is full");
  }
};

DatasetMonitor::Options MakeOptions(const TempDir& root, Reports* reports, Clock* clock,
                                    bool watch) {
  DatasetMonitor::Options options;
  options.counter.host_root = root.path();
  options.clock = clock;
  options.watch = watch;
  options.min_interval = absl::ZeroDuration();
  options.on_report = [reports](const ScanReport& r) { return reports->Add(r); };
  options.on_checkpoint = [reports](const std::string& key, const std::string& data) {
    return reports->AddCheckpoint(key, data);
  };
  return options;
}

// Waits until the scanner is parked on the fake clock (so an Advance() is seen by it).
void WaitParked(FakeClock& clock) { REQUIRE(Eventually([&] { return clock.timed_waiters() > 0; })); }

TEST_CASE("periodic rescans follow the clock and report only changes", "[monitor]") {
  TempDir root;
  root.Write("data/a.txt", "1\n2\n");
  root.Write("data/empty.txt", "");
  FakeClock clock;
  Reports reports;
  DatasetMonitor::Options options = MakeOptions(root, &reports, &clock, /*watch=*/false);
  options.period = absl::Seconds(60);
  DatasetMonitor monitor(options);
  monitor.Start();
  monitor.Upsert({"default/a", "/data/a.txt", "txt"});
  ScanReport first = reports.WaitFor(1);
  CHECK(first.spec.key == "default/a");
  CHECK(first.status.ok());
  CHECK(first.count == 2);

  // The first result is reported even when it is 0.
  monitor.Upsert({"default/empty", "/data/empty.txt", "txt"});
  ScanReport empty = reports.WaitFor(2);
  CHECK(empty.spec.key == "default/empty");
  CHECK(empty.count == 0);

  root.Append("data/a.txt", "3\n");
  WaitParked(clock);
  clock.Advance(absl::Seconds(59));
  WaitParked(clock);
  CHECK(reports.size() == 2);  // not due yet
  const uint64_t scans_before = monitor.stats().scans;
  clock.Advance(absl::Seconds(1));
  ScanReport grown = reports.WaitFor(3);
  CHECK(grown.spec.key == "default/a");
  CHECK(grown.count == 3);
  CHECK(grown.incremental);
  CHECK(grown.bytes_read == 2 + 4);  // appended bytes + the guard (the 4 bytes before)
  // Both datasets were due, and nothing else ran.
  REQUIRE(Eventually([&] { return monitor.stats().scans >= scans_before + 2; }));
  WaitParked(clock);
  CHECK(monitor.stats().scans == scans_before + 2);

  // Nothing changed: the next period scans again but reports nothing.
  WaitParked(clock);
  clock.Advance(absl::Seconds(60));
  REQUIRE(Eventually([&] { return monitor.stats().scans >= scans_before + 4; }));
  CHECK(reports.size() == 3);

  // Errors are reported once, with reason, and recovery is reported.
  REQUIRE(std::remove(root.Path("data/a.txt").c_str()) == 0);
  WaitParked(clock);
  clock.Advance(absl::Seconds(60));
  ScanReport gone = reports.WaitFor(4);
  CHECK(ReasonOf(gone.status) == "PathNotFound");
  WaitParked(clock);
  clock.Advance(absl::Seconds(60));
  REQUIRE(Eventually([&] { return monitor.stats().scans >= scans_before + 8; }));
  CHECK(reports.size() == 4);  // same error: not reported again
  root.Write("data/a.txt", "x\n");
  WaitParked(clock);
  clock.Advance(absl::Seconds(60));
  ScanReport back = reports.WaitFor(5);
  CHECK(back.status.ok());
  CHECK(back.count == 1);
  monitor.Stop();
}

TEST_CASE("a report and checkpoint that could not be stored are delivered again after the next "
          "scan, though nothing changed", "[monitor]") {
  TempDir root;
  root.Write("data/a.txt", "1\n2\n");
  FakeClock clock;
  Reports reports;
  DatasetMonitor::Options options = MakeOptions(root, &reports, &clock, /*watch=*/false);
  options.period = absl::Seconds(60);
  DatasetMonitor monitor(options);
  monitor.Start();
  monitor.Upsert({"default/a", "/data/a.txt", "txt"});
  REQUIRE(reports.WaitFor(1).count == 2);
  const std::string stored_checkpoint = reports.checkpoint("default/a");

  // The disk is full when the dataset grows: both callbacks refuse.
  reports.SetFailing(true);
  root.Append("data/a.txt", "3\n");
  WaitParked(clock);
  clock.Advance(absl::Seconds(60));
  REQUIRE(Eventually([&] { return reports.refused() == 2; }));
  // Space returns; the file does not change, yet the next scan delivers both again.
  reports.SetFailing(false);
  WaitParked(clock);
  clock.Advance(absl::Seconds(60));
  ScanReport again = reports.WaitFor(2);
  CHECK(again.count == 3);
  CHECK(reports.checkpoint("default/a") != stored_checkpoint);
  // Stored now: a further unchanged scan reports nothing.
  const uint64_t scans = monitor.stats().scans;
  WaitParked(clock);
  clock.Advance(absl::Seconds(60));
  REQUIRE(Eventually([&] { return monitor.stats().scans > scans; }));
  WaitParked(clock);
  CHECK(reports.size() == 2);
  monitor.Stop();
}

// Lets time pass a second at a time while the scanner waits, until `reports` has `n` reports or
// `limit` has passed; returns the time it took.
absl::Duration PassUntilReports(FakeClock& clock, Reports& reports, size_t n, absl::Duration limit) {
  absl::Duration passed;
  fakes::Eventually(
      [&] {
        if (clock.timed_waiters() > 0 && passed < limit) {
          clock.Advance(absl::Seconds(1));
          passed += absl::Seconds(1);
        }
        return reports.size() >= n;
      },
      absl::Seconds(20), absl::Milliseconds(2));
  return passed;
}

TEST_CASE("steps of the wall clock back or forward do not stall periodic scans", "[monitor]") {
  TempDir root;
  root.Write("data/a.txt", "1\n2\n");
  FakeClock clock;
  Reports reports;
  DatasetMonitor::Options options = MakeOptions(root, &reports, &clock, /*watch=*/false);
  options.period = absl::Seconds(60);
  DatasetMonitor monitor(options);
  monitor.Start();
  monitor.Upsert({"default/a", "/data/a.txt", "txt"});
  REQUIRE(reports.WaitFor(1).count == 2);

  // Back an hour: the next periodic scan comes a period later, not an hour and a period.
  root.Append("data/a.txt", "3\n");
  WaitParked(clock);
  clock.SetTime(clock.Now() - absl::Hours(1));
  absl::Duration passed = PassUntilReports(clock, reports, 2, absl::Hours(2));
  CHECK(passed <= absl::Seconds(70));  // the period, give or take a few slices; not an hour
  CHECK(reports.WaitFor(2).count == 3);

  // Forward an hour: the scan that became due runs within a slice.
  root.Append("data/a.txt", "4\n");
  WaitParked(clock);
  clock.SetTime(clock.Now() + absl::Hours(1));
  passed = PassUntilReports(clock, reports, 3, absl::Hours(2));
  CHECK(passed <= absl::Seconds(5));
  CHECK(reports.WaitFor(3).count == 4);
  monitor.Stop();
}

TEST_CASE("spec changes rescan at once; removal stops reports", "[monitor]") {
  TempDir root;
  root.Write("a.txt", "1\n");
  root.Write("b.txt", "1\n2\n");
  FakeClock clock;
  Reports reports;
  DatasetMonitor monitor(MakeOptions(root, &reports, &clock, /*watch=*/false));
  monitor.Start();
  monitor.Upsert({"ns/d", "/a.txt", "txt"});
  CHECK(reports.WaitFor(1).count == 1);
  monitor.Upsert({"ns/other", "/a.txt", "txt"});  // keeps the scanner on a timer below
  CHECK(reports.WaitFor(2).spec.key == "ns/other");
  monitor.Upsert({"ns/d", "/a.txt", "txt"});  // same spec: nothing to do
  monitor.Upsert({"ns/d", "/b.txt", "txt"});
  CHECK(reports.WaitFor(3).count == 2);
  monitor.Upsert({"ns/d", "/b.txt", "unknown"});
  ScanReport bad = reports.WaitFor(4);
  CHECK(ReasonOf(bad.status) == "UnknownFormat");
  CHECK(monitor.Last("ns/d").has_value());
  monitor.Remove("ns/d");
  CHECK(monitor.size() == 1);
  CHECK_FALSE(monitor.Last("ns/d").has_value());
  monitor.RequestRescan("ns/d");  // unknown key: ignored
  WaitParked(clock);
  root.Append("b.txt", "3\n");
  const uint64_t scans = monitor.stats().scans;
  clock.Advance(absl::Minutes(5));
  REQUIRE(Eventually([&] { return monitor.stats().scans > scans; }));  // ns/other was rescanned
  WaitParked(clock);
  CHECK(reports.size() == 4);  // and nothing about the removed ns/d
}

TEST_CASE("a restarted LC resumes from its stored checkpoint and last report", "[monitor]") {
  TempDir root;
  std::string body;
  for (int i = 0; i < 1000; ++i) body += "sample " + std::to_string(i) + "\n";
  root.Write("d.txt", body);
  FakeClock clock;
  std::string stored_checkpoint;
  {
    Reports reports;
    DatasetMonitor monitor(MakeOptions(root, &reports, &clock, false));
    monitor.Start();
    monitor.Upsert({"ns/d", "/d.txt", "txt"});
    CHECK(reports.WaitFor(1).count == 1000);
    stored_checkpoint = reports.checkpoint("ns/d");
  }
  REQUIRE_FALSE(stored_checkpoint.empty());
  root.Append("d.txt", "new\n");
  Reports reports;
  DatasetMonitor monitor(MakeOptions(root, &reports, &clock, false));
  monitor.Start();
  DatasetMonitor::Prior prior;
  prior.checkpoint = stored_checkpoint;
  prior.reported = ReportedState{true, 1000, "", ""};
  monitor.Upsert({"ns/d", "/d.txt", "txt"}, prior);
  ScanReport report = reports.WaitFor(1);
  CHECK(report.count == 1001);
  CHECK(report.incremental);
  CHECK(report.bytes_read == 4 + Checkpoint::kGuardBytes);

  // Same count as already reported before the restart: no report.
  Reports quiet;
  DatasetMonitor again(MakeOptions(root, &quiet, &clock, false));
  again.Start();
  prior.reported = ReportedState{true, 1001, "", ""};
  again.Upsert({"ns/d", "/d.txt", "txt"}, prior);
  REQUIRE(Eventually([&] { return again.stats().scans >= 1; }));
  CHECK(quiet.size() == 0);
}

TEST_CASE("inotify changes trigger rescans without waiting for the period", "[monitor][inotify]") {
  TempDir root;
  root.Write("data/a.txt", "1\n2\n");
  Reports reports;
  DatasetMonitor::Options options = MakeOptions(root, &reports, Clock::Real(), /*watch=*/true);
  options.period = absl::Hours(1);  // only inotify can trigger the rescans below
  DatasetMonitor monitor(options);
  monitor.Start();
  monitor.Upsert({"ns/a", "/data/a.txt", "txt"});
  CHECK(reports.WaitFor(1).count == 2);

  root.Append("data/a.txt", "3\n");
  ScanReport appended = reports.WaitFor(2);
  CHECK(appended.count == 3);
  CHECK(appended.incremental);

  // Replaced by rename: a new inode under the same name.
  root.Write("data/.a.txt.tmp", "x\ny\nz\nw\n\n");
  REQUIRE(std::rename(root.Path("data/.a.txt.tmp").c_str(), root.Path("data/a.txt").c_str()) == 0);
  ScanReport replaced = reports.WaitFor(3);
  CHECK(replaced.count == 4);
  CHECK_FALSE(replaced.incremental);

  // A dataset whose directory does not exist yet is picked up when it appears.
  monitor.Upsert({"ns/later", "/incoming/batch/later.txt", "txt"});
  ScanReport missing = reports.WaitFor(4);
  CHECK(ReasonOf(missing.status) == "PathNotFound");
  root.Mkdir("incoming/batch");
  root.Write("incoming/batch/later.txt", "a\nb\n");
  REQUIRE(Eventually([&] {
    std::optional<ScanReport> last = monitor.Last("ns/later");
    return last.has_value() && last->status.ok() && last->count == 2;
  }));

  // Deleting the file is seen too.
  REQUIRE(std::remove(root.Path("data/a.txt").c_str()) == 0);
  REQUIRE(Eventually([&] {
    std::optional<ScanReport> last = monitor.Last("ns/a");
    return last.has_value() && ReasonOf(last->status) == "PathNotFound";
  }));
  monitor.Stop();
}

TEST_CASE("Remove does not wait for a slow count, and its result is dropped", "[monitor]") {
  TempDir root;
  testing::TestServer server;
  server.server().Get("/slow.txt", [&](const httplib::Request&, httplib::Response& res) {
    ++server.requests();
    server.release().WaitForNotificationWithTimeout(absl::Seconds(10));
    res.set_content("a\nb\n", "text/plain");
  });
  Reports reports;
  FakeClock clock;
  DatasetMonitor::Options options = MakeOptions(root, &reports, &clock, false);
  options.counter.http.read_timeout = absl::Seconds(20);
  DatasetMonitor monitor(options);
  monitor.Start();
  monitor.Upsert({"ns/slow", server.Url("/slow.txt"), "txt"});
  REQUIRE(Eventually([&] { return server.requests() == 1; }));  // the scanner is in the download
  const absl::Time start = absl::Now();
  monitor.Remove("ns/slow");
  CHECK(absl::Now() - start < absl::Seconds(5));
  server.release().Notify();  // the download completes now; its result must be dropped
  REQUIRE(Eventually([&] { return monitor.stats().scans == 1; }));
  monitor.Stop();
  CHECK(reports.size() == 0);
}

TEST_CASE("the inotify watcher shares directory watches and reports by name", "[inotify]") {
  TempDir root;
  root.Write("d/a.txt", "");
  root.Write("d/b.txt", "");
  absl::Mutex mu;
  std::vector<std::string> changed;
  absl::StatusOr<std::unique_ptr<InotifyWatcher>> watcher =
      InotifyWatcher::Create([&](const std::string& key) {
        absl::MutexLock lock(&mu);
        changed.push_back(key);
      });
  REQUIRE(watcher.ok());
  REQUIRE((*watcher)->Watch("a", {root.Path("d"), "a.txt"}).ok());
  REQUIRE((*watcher)->Watch("b", {root.Path("d"), "b.txt"}).ok());
  REQUIRE((*watcher)->Watch("all", {root.Path("d"), ""}).ok());
  CHECK((*watcher)->watch_count() == 1);
  root.Append("d/b.txt", "x");
  REQUIRE(Eventually([&] {
    absl::MutexLock lock(&mu);
    return std::count(changed.begin(), changed.end(), "all") > 0 &&
           std::count(changed.begin(), changed.end(), "b") > 0;
  }));
  {
    absl::MutexLock lock(&mu);
    CHECK(std::count(changed.begin(), changed.end(), "a") == 0);
  }
  (*watcher)->Unwatch("a");
  (*watcher)->Unwatch("b");
  CHECK((*watcher)->watch_count() == 1);
  (*watcher)->Unwatch("all");
  CHECK((*watcher)->watch_count() == 0);
  CHECK_FALSE((*watcher)->Watch("x", {root.Path("missing"), ""}).ok());
}

}  // namespace
}  // namespace nereid::lc::dataset
