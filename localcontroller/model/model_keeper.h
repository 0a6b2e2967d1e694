#pragma once

// Keeps the node's Model specs and their verification current (see model_verifier.h for what a
// check does). A model is checked when it is added or its spec changes, and then every
// `check_period` for host paths (a stat; the file is re-hashed only when its device, inode, size or
// mtime changed) and every `http_check_period` for http(s) urls (a conditional GET: a 304 costs no
// transfer). `on_report` is called the first time and whenever the reported state (verified,
// sha256, reason, message — the fields of edge.v1.ModelStatus) changed.
//
// Threads: one checker thread ("model-check") does every check, one at a time, so callers (the
// cloud link, REST) never block on disk or network. Callbacks run on it without the keeper's lock
// and must not call Remove() or Stop(). Remove cancels a check of that model in progress and
// waits for a callback of it to finish; Stop cancels and joins. Timing uses the injected Clock.

#include <atomic>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/time/clock.h"
#include "localcontroller/model/model_verifier.h"

namespace nereid::lc::model {

// The part of a Check that goes upstream (edge.v1.ModelStatus): reports happen when it changes.
struct ReportedModelState {
  bool verified = false;
  std::string sha256;
  std::string reason;
  std::string message;
  bool operator==(const ReportedModelState&) const = default;
};
ReportedModelState ReportedStateOf(const Check& check);

struct ModelReport {
  ModelSpec spec;
  Check check;
  absl::Time check_time;
};

class ModelKeeper {
 public:
  // Returns whether the report was stored; one that was not (a full disk) is made again at the
  // next check, `retry_delay` later, even when nothing changed, so it is not lost.
  using ReportCallback = std::function<absl::Status(const ModelReport&)>;

  struct Options {
    VerifierOptions verifier;
    absl::Duration check_period = absl::Seconds(60);
    absl::Duration http_check_period = absl::Hours(1);
    // After a file changed under a check, or its report was not stored, look again this much later.
    absl::Duration retry_delay = absl::Seconds(1);
    Clock* clock = Clock::Real();
    ReportCallback on_report;
  };

  struct Stats {
    uint64_t checks = 0;
    uint64_t reports = 0;
    uint64_t bytes_hashed = 0;
  };

  explicit ModelKeeper(Options options);
  ~ModelKeeper();  // Stop()
  ModelKeeper(const ModelKeeper&) = delete;
  ModelKeeper& operator=(const ModelKeeper&) = delete;

  void Start();
  void Stop();  // idempotent
  bool running() const;

  // Adds a model or changes its spec (a changed spec is checked again now). `prior` is the last
  // reported Check from before a restart: its fingerprint spares re-hashing an unchanged file and
  // no report is made while the state equals it.
  void Upsert(const ModelSpec& spec, std::optional<Check> prior = std::nullopt);
  // Stops tracking; no callback for `key` runs after it returns.
  void Remove(const std::string& key);
  // Checks again now.
  void RequestCheck(const std::string& key);

  std::optional<ModelReport> Last(const std::string& key) const;
  std::vector<ModelSpec> Specs() const;
  size_t size() const;
  Stats stats() const;

 private:
  struct Tracked {
    ModelSpec spec;
    uint64_t generation = 0;
    std::optional<Check> previous;  // last check (or prior), for fingerprint reuse
    std::optional<ReportedModelState> reported;
    std::optional<ModelReport> last;
    absl::Time due = absl::InfinitePast();
  };

  void Run();
  std::optional<std::string> NextDueLocked(absl::Time now, absl::Time* wake)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void CheckLocked(const std::string& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Duration PeriodFor(const ModelSpec& spec) const;

  const Options options_;
  const ModelVerifier verifier_;

  mutable absl::Mutex mu_;
  std::map<std::string, Tracked> models_ ABSL_GUARDED_BY(mu_);
  uint64_t next_generation_ ABSL_GUARDED_BY(mu_) = 1;
  bool wake_ ABSL_GUARDED_BY(mu_) = false;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::string checking_ ABSL_GUARDED_BY(mu_);   // key being checked, "" if none
  std::string reporting_ ABSL_GUARDED_BY(mu_);  // key whose callback runs, "" if none
  Stats stats_ ABSL_GUARDED_BY(mu_);
  std::atomic<bool> cancel_{false};
  std::thread thread_;
};

}  // namespace nereid::lc::model
