#include "localcontroller/dataset/dataset_monitor.h"

#include <pthread.h>

#include <utility>

#include "common/log/log.h"
#include "localcontroller/dataset/errors.h"
#include "localcontroller/dataset/inotify_watcher.h"

namespace nereid::lc::dataset {

ReportedState ScanReport::reported() const {
  ReportedState state;
  state.ok = status.ok();
  if (state.ok) {
    state.count = count;
  } else {
    state.reason = ReasonOf(status);
    state.message = std::string(status.message());
  }
  return state;
}

DatasetMonitor::DatasetMonitor(Options options)
    : options_(std::move(options)), counter_(options_.counter), steps_(options_.clock) {}

DatasetMonitor::~DatasetMonitor() { Stop(); }

void DatasetMonitor::Start() {
  std::unique_ptr<ChangeWatcher> watcher;
  if (options_.watch) {
    ChangeWatcher::OnChange on_change = [this](const std::string& key) { RequestRescan(key); };
    absl::StatusOr<std::unique_ptr<ChangeWatcher>> created =
        options_.watcher_factory
            ? options_.watcher_factory(on_change)
            : [&]() -> absl::StatusOr<std::unique_ptr<ChangeWatcher>> {
                absl::StatusOr<std::unique_ptr<InotifyWatcher>> w =
                    InotifyWatcher::Create(on_change);
                if (!w.ok()) return w.status();
                return std::unique_ptr<ChangeWatcher>(std::move(*w));
              }();
    if (created.ok()) {
      watcher = std::move(*created);
    } else {
      LOG(WARNING) << "dataset monitor: change watching disabled, periodic rescans only: "
                   << created.status().message();
    }
  }
  absl::MutexLock lock(&mu_);
  if (started_ || stopping_) return;
  started_ = true;
  watcher_ = std::move(watcher);
  thread_ = std::thread([this] { Run(); });
}

void DatasetMonitor::Stop() {
  std::unique_ptr<ChangeWatcher> watcher;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    wake_ = true;
    cancel_scan_ = true;
  }
  if (thread_.joinable()) thread_.join();
  {
    absl::MutexLock lock(&mu_);
    watcher = std::move(watcher_);
  }
  watcher.reset();  // joins the watch thread, whose callback may need mu_: not under the lock
}

void DatasetMonitor::Upsert(const DatasetSpec& spec, std::optional<Prior> prior) {
  absl::MutexLock lock(&mu_);
  auto [it, inserted] = datasets_.try_emplace(spec.key);
  Tracked& t = it->second;
  if (inserted) {
    t.spec = spec;
    t.generation = next_generation_++;
    if (prior.has_value()) {
      if (!prior->checkpoint.empty()) {
        absl::StatusOr<Checkpoint> checkpoint = ParseCheckpoint(prior->checkpoint);
        if (checkpoint.ok()) {
          t.checkpoint = std::move(*checkpoint);
        } else {
          LOG(WARNING) << "dataset " << spec.key << ": stored checkpoint ignored, recounting: "
                       << checkpoint.status().message();
        }
      }
      t.reported = prior->reported;
    }
    wake_ = true;
    return;
  }
  if (t.spec == spec) return;
  if (t.spec.url == spec.url && t.spec.format == spec.format) {
    // Only the credential changed (a rotated Secret): the object and its checkpoint are the same,
    // so rescan soon with the new credential but keep the checkpoint (no full download).
    LOG(INFO) << "dataset " << spec.key << ": storage credential changed, rescanning";
    t.spec = spec;
    t.dirty = true;
    wake_ = true;
    return;
  }
  LOG(INFO) << "dataset " << spec.key << ": spec changed (url " << spec.url << ", format "
            << spec.format << "), rescanning";
  t.spec = spec;
  t.generation = next_generation_++;
  t.checkpoint.reset();
  t.dirty = true;
  t.scanned = false;
  if (scanning_ == spec.key) cancel_scan_ = true;
  wake_ = true;
}

void DatasetMonitor::Remove(const std::string& key) {
  absl::MutexLock lock(&mu_);
  if (datasets_.erase(key) == 0) return;
  if (watcher_) watcher_->Unwatch(key);
  // A count in progress is cancelled and its result dropped; a report being delivered is waited
  // for (callbacks are short), so no callback for `key` starts or runs after this returns.
  if (scanning_ == key) cancel_scan_ = true;
  if (reporting_ == key) {
    auto done = [this, &key]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return reporting_ != key; };
    mu_.Await(absl::Condition(&done));
  }
}

void DatasetMonitor::RequestRescan(const std::string& key) {
  absl::MutexLock lock(&mu_);
  auto it = datasets_.find(key);
  if (it == datasets_.end()) return;
  it->second.dirty = true;
  wake_ = true;
}

std::optional<ScanReport> DatasetMonitor::Last(const std::string& key) const {
  absl::MutexLock lock(&mu_);
  auto it = datasets_.find(key);
  if (it == datasets_.end()) return std::nullopt;
  return it->second.last;
}

std::vector<DatasetSpec> DatasetMonitor::Specs() const {
  absl::MutexLock lock(&mu_);
  std::vector<DatasetSpec> specs;
  specs.reserve(datasets_.size());
  for (const auto& [key, t] : datasets_) specs.push_back(t.spec);
  return specs;
}

size_t DatasetMonitor::size() const {
  absl::MutexLock lock(&mu_);
  return datasets_.size();
}

DatasetMonitor::Stats DatasetMonitor::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

void DatasetMonitor::Run() {
  pthread_setname_np(pthread_self(), "dataset-scan");
  absl::MutexLock lock(&mu_);
  while (!stopping_) {
    if (const absl::Duration back = steps_.BackwardStep(); back > absl::ZeroDuration()) {
      // Without this the next periodic scan would wait for the step to be lived again.
      LOG(WARNING) << "dataset monitor: the clock went back " << back << "; rescheduling scans";
      for (auto& [key, t] : datasets_) {
        t.next_periodic -= back;
        t.last_scan_start -= back;
      }
    }
    absl::Time wake = absl::InfiniteFuture();
    std::optional<std::string> key = NextDueLocked(options_.clock->Now(), &wake);
    if (key.has_value()) {
      ScanLocked(*key);
      continue;
    }
    wake_ = false;
    steps_.AwaitUntil(&mu_, absl::Condition(&wake_), wake);
  }
}

std::optional<std::string> DatasetMonitor::NextDueLocked(absl::Time now, absl::Time* wake) {
  std::optional<std::string> best;
  absl::Time best_due = absl::InfiniteFuture();
  for (const auto& [key, t] : datasets_) {
    absl::Time due = t.next_periodic;
    if (t.dirty) {
      due = std::min(due, t.scanned ? t.last_scan_start + options_.min_interval
                                    : absl::InfinitePast());
    }
    if (due <= now) {
      if (!best.has_value() || due < best_due) {
        best = key;
        best_due = due;
      }
    } else {
      *wake = std::min(*wake, due);
    }
  }
  return best;
}

std::optional<HostRoot::WatchTarget> DatasetMonitor::WatchTarget(const std::string& url) const {
  absl::StatusOr<HostRoot::WatchTarget> target = counter_.WatchTargetFor(url);
  if (!target.ok()) return std::nullopt;  // http, or an error the scan reports itself
  return std::move(*target);
}

void DatasetMonitor::WatchLogged(const std::string& key, const HostRoot::WatchTarget& target) {
  if (absl::Status s = watcher_->Watch(key, target); !s.ok()) {
    LOG(DEBUG) << "dataset " << key << ": not watched (" << s.message()
               << "), periodic rescans only";
  }
}

void DatasetMonitor::ScanLocked(const std::string& key) {
  Tracked& t = datasets_.at(key);
  const absl::Time start = options_.clock->Now();
  t.dirty = false;
  t.last_scan_start = start;
  t.next_periodic = start + options_.period;
  const DatasetSpec spec = t.spec;
  const uint64_t generation = t.generation;
  const std::optional<Checkpoint> previous = t.checkpoint;
  const bool watching = watcher_ != nullptr;
  scanning_ = key;
  cancel_scan_ = false;

  mu_.Unlock();
  // The watch is set before counting, so a change during the count is not missed; if the target
  // moved meanwhile (a missing directory appeared), the new one is watched and the dataset is
  // scanned again.
  std::optional<HostRoot::WatchTarget> before;
  if (watching) {
    before = WatchTarget(spec.url);
    if (before.has_value()) WatchLogged(key, *before);
  }
  CountRequest request;
  request.url = spec.url;
  request.format = spec.format;
  request.previous = previous.has_value() ? &*previous : nullptr;
  request.cancel = &cancel_scan_;
  request.s3_credential = spec.s3_credential.has_value() ? &*spec.s3_credential : nullptr;
  absl::StatusOr<CountResult> result = counter_.Count(request);
  std::optional<HostRoot::WatchTarget> after;
  if (watching) after = WatchTarget(spec.url);
  mu_.Lock();

  ++stats_.scans;
  stats_.scan_time += options_.clock->Now() - start;
  auto it = datasets_.find(key);
  if (it == datasets_.end() || it->second.generation != generation || stopping_) {
    // Removed, changed or stopping meanwhile: this result is stale.
    if (watching && it == datasets_.end()) watcher_->Unwatch(key);
    scanning_.clear();
    return;
  }
  Tracked& current = it->second;
  if (after.has_value() && after != before) {
    WatchLogged(key, *after);
    current.dirty = true;
  }
  if (!result.ok()) {
    const std::string reason = ReasonOf(result.status());
    if (reason == "FileChanged" || reason == "Cancelled") {
      // Transient: the file moved under the scan. Not a result; look again after min_interval.
      current.dirty = reason == "FileChanged";
      current.scanned = true;
      scanning_.clear();
      return;
    }
  }

  ScanReport report;
  report.spec = spec;
  report.scan_time = options_.clock->Now();
  if (result.ok()) {
    report.count = result->count;
    report.incremental = result->incremental;
    report.bytes_read = result->bytes_read;
  } else {
    report.status = result.status();
  }
  current.last = report;
  current.scanned = true;
  stats_.bytes_read += report.bytes_read;

  std::string checkpoint_data;
  if (result.ok() && (!current.checkpoint.has_value() || !current.checkpoint_stored ||
                      !(*current.checkpoint == result->checkpoint))) {
    current.checkpoint = result->checkpoint;
    checkpoint_data = SerializeCheckpoint(result->checkpoint);
  }
  const ReportedState state = report.reported();
  const bool emit = !current.reported.has_value() || !(*current.reported == state);
  if (emit) {
    current.reported = state;
    ++stats_.reports;
    if (result.ok()) {
      LOG(INFO) << "dataset " << key << ": " << report.count << " samples ("
                << (report.incremental ? "incremental, " : "") << report.bytes_read
                << " bytes read)";
    } else {
      LOG(WARNING) << "dataset " << key << ": " << state.reason << ": " << state.message;
    }
  }

  // Callbacks without the lock; reporting_ makes Remove(key) wait for them.
  scanning_.clear();
  reporting_ = key;
  mu_.Unlock();
  bool checkpoint_stored = true;
  bool report_stored = true;
  if (!checkpoint_data.empty() && options_.on_checkpoint) {
    checkpoint_stored = options_.on_checkpoint(key, checkpoint_data).ok();
  }
  if (emit && options_.on_report) report_stored = options_.on_report(report).ok();
  mu_.Lock();
  reporting_.clear();
  // Removed or changed meanwhile: a new generation starts afresh anyway.
  auto again = datasets_.find(key);
  if (again == datasets_.end() || again->second.generation != generation) return;
  if (!checkpoint_data.empty()) again->second.checkpoint_stored = checkpoint_stored;
  if (!report_stored) again->second.reported.reset();  // deliver it again after the next scan
}

}  // namespace nereid::lc::dataset
