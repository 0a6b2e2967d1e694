#pragma once

// Keeps the sample counts of the node's datasets current. Given dataset specs (key "ns/name", url,
// format) it scans each one when it is added or its spec changes, when the ChangeWatcher says its
// file or directory changed (debounced by `min_interval`), and every `period` (default 60 s, as
// Sedna), and calls `on_report` when the count or the error changed since the last report, and
// always for the first result, 0 included. Checkpoints make the rescan of a grown file read only
// the new bytes; `on_checkpoint` hands them out for persistence.
//
// Threads: one scanner thread ("dataset-scan") does every count, one at a time, so the callers
// (cloud link, REST) never block on disk or network; the watcher has its own thread that only
// marks datasets dirty. Callbacks run on the scanner thread without the monitor's lock held; they
// must not block for long and must not call Remove() or Stop() (Remove waits for a callback of the
// dataset being removed to finish; Stop joins the scanner thread). Remove cancels a count in
// progress; Stop cancels it too, but an http transfer only notices between chunks, so Stop can take
// up to the http read timeout. One scanner thread means one slow dataset (a large or slow http
// download) delays the others' scans; local counts take milliseconds per GiB from the page cache.
// Timing uses the injected Clock, so tests drive the period with a FakeClock.

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/s3/credential.h"
#include "common/time/clock.h"
#include "common/time/wall_clock_steps.h"
#include "localcontroller/dataset/change_watcher.h"
#include "localcontroller/dataset/checkpoint.h"
#include "localcontroller/dataset/sample_counter.h"

namespace nereid::lc::dataset {

struct DatasetSpec {
  std::string key;  // "namespace/name"
  std::string url;
  std::string format;
  // For an s3:// url: the Dataset's storage credential (never logged).
  std::optional<nereid::s3::Credential> s3_credential = std::nullopt;
  bool operator==(const DatasetSpec&) const = default;
};

// What was last reported upstream for a dataset: a count, or an error reason + message.
struct ReportedState {
  bool ok = true;
  uint64_t count = 0;
  std::string reason;
  std::string message;
  bool operator==(const ReportedState&) const = default;
};

struct ScanReport {
  DatasetSpec spec;
  absl::Status status;  // OK, or the error; ReasonOf(status) is its machine-readable reason
  uint64_t count = 0;   // when status is OK
  absl::Time scan_time;
  bool incremental = false;
  uint64_t bytes_read = 0;

  ReportedState reported() const;
};

class DatasetMonitor {
 public:
  // Both return whether the data was stored; what failed (a full disk) is delivered again after
  // the next scan, even when that scan finds nothing new, so nothing is lost once space returns.
  using ReportCallback = std::function<absl::Status(const ScanReport&)>;
  using CheckpointCallback =
      std::function<absl::Status(const std::string& key, const std::string& data)>;
  using WatcherFactory =
      std::function<absl::StatusOr<std::unique_ptr<ChangeWatcher>>(ChangeWatcher::OnChange)>;

  struct Options {
    CounterOptions counter;
    absl::Duration period = absl::Seconds(60);
    absl::Duration min_interval = absl::Seconds(1);  // between change-triggered scans of a dataset
    Clock* clock = Clock::Real();
    // Creates the change watcher; null means InotifyWatcher. Return nullptr to disable watching.
    WatcherFactory watcher_factory;
    bool watch = true;
    ReportCallback on_report;
    CheckpointCallback on_checkpoint;  // optional: after every scan that moved the checkpoint
  };

  // What the LC knew about a dataset before a restart (from its database).
  struct Prior {
    std::string checkpoint;                 // SerializeCheckpoint() output; may be empty
    std::optional<ReportedState> reported;  // the last report that was sent, if any
  };

  struct Stats {
    uint64_t scans = 0;
    uint64_t reports = 0;
    uint64_t bytes_read = 0;
    absl::Duration scan_time;  // total time spent in scans (on the monitor's clock)
  };

  explicit DatasetMonitor(Options options);
  ~DatasetMonitor();  // Stop()
  DatasetMonitor(const DatasetMonitor&) = delete;
  DatasetMonitor& operator=(const DatasetMonitor&) = delete;

  void Start();
  // Cancels an in-flight scan and joins the threads. Idempotent.
  void Stop();

  // Adds a dataset or changes its spec (a changed spec drops the checkpoint and rescans now).
  void Upsert(const DatasetSpec& spec, std::optional<Prior> prior = std::nullopt);
  // Stops tracking; once it returns no callback for `key` runs any more. Does not wait for a count
  // in progress (it is cancelled and its result dropped).
  void Remove(const std::string& key);
  // Rescans soon (respecting min_interval).
  void RequestRescan(const std::string& key);

  std::optional<ScanReport> Last(const std::string& key) const;
  std::vector<DatasetSpec> Specs() const;
  size_t size() const;
  Stats stats() const;

 private:
  struct Tracked {
    DatasetSpec spec;
    uint64_t generation = 0;
    std::optional<Checkpoint> checkpoint;
    bool checkpoint_stored = true;  // on_checkpoint took `checkpoint`
    std::optional<ReportedState> reported;  // the last report on_report took
    std::optional<ScanReport> last;
    bool dirty = true;
    bool scanned = false;
    absl::Time last_scan_start = absl::InfinitePast();
    absl::Time next_periodic = absl::InfinitePast();
  };

  void Run();
  // Picks the dataset to scan now, or sets *wake to when the next one is due.
  std::optional<std::string> NextDueLocked(absl::Time now, absl::Time* wake)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ScanLocked(const std::string& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  std::optional<HostRoot::WatchTarget> WatchTarget(const std::string& url) const;
  void WatchLogged(const std::string& key, const HostRoot::WatchTarget& target);

  const Options options_;
  SampleCounter counter_;
  // Set by Start() before the scanner thread starts and reset by Stop() after it ended, so the
  // scanner reads it without the lock; the watcher synchronizes its own calls.
  std::unique_ptr<ChangeWatcher> watcher_;

  mutable absl::Mutex mu_;
  std::map<std::string, Tracked> datasets_ ABSL_GUARDED_BY(mu_);
  uint64_t next_generation_ ABSL_GUARDED_BY(mu_) = 1;
  bool wake_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  std::string scanning_ ABSL_GUARDED_BY(mu_);   // key being counted, "" if none
  std::string reporting_ ABSL_GUARDED_BY(mu_);  // key whose callbacks are running, "" if none
  Stats stats_ ABSL_GUARDED_BY(mu_);
  // Scans are scheduled at wall-clock times: a step of the clock back moves them back.
  WallClockSteps steps_ ABSL_GUARDED_BY(mu_);
  std::atomic<bool> cancel_scan_{false};
  std::thread thread_;
};

}  // namespace nereid::lc::dataset
