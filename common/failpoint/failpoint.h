#pragma once

// Test-only failpoints: named places in the daemons where a crash test can stop the process at a
// chosen moment (the idea of etcd's gofail and TiKV's fail-rs, without their framework). Disabled
// unless the environment variable NEREID_FAILPOINTS names some, e.g.
//
//   NEREID_FAILPOINTS="lc-dataset-before-checkpoint=pause"
//   NEREID_FAILPOINTS="lc-report-ack-before-commit=pause;lc-dataset-before-report=off"
//
// A `pause` point, when reached, logs "failpoint NAME: paused" (WARNING, the test's marker) and
// blocks the calling thread for a bounded time (60 s), so the test can SIGKILL the process at
// exactly that point; afterwards it logs "failpoint NAME: released" and the code carries on.
// The environment is read once (InitFromEnv, at start in main); when nothing is armed, Hit() is
// one relaxed atomic load. Production never sets the variable; the daemon logs a warning when it
// is set.

#include <atomic>
#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace nereid::failpoint {

inline constexpr char kEnvVar[] = "NEREID_FAILPOINTS";

// The LC's points, in the order a dataset's growth passes them (names are the contract with the
// crash tests).
// A scan counted a grown dataset; nothing of that scan is in SQLite yet.
inline constexpr char kLcDatasetBeforeCheckpoint[] = "lc-dataset-before-checkpoint";
// The scan's checkpoint is committed; its result and outbox report are not.
inline constexpr char kLcDatasetBeforeReport[] = "lc-dataset-before-report";
// A report is committed in the outbox; the cloud link has not sent it yet.
inline constexpr char kLcReportBeforeSend[] = "lc-report-before-send";
// The GM ACKed a report (it is in the Kubernetes API); the LC has not deleted it from its outbox.
inline constexpr char kLcReportAckBeforeCommit[] = "lc-report-ack-before-commit";

enum class Action { kOff, kPause };

// "name=action[;name=action...]" (';' or ',' between entries, blanks ignored; actions `off`,
// `pause`). An empty spec arms nothing. Unknown actions and malformed entries are errors, so a
// typo in a test does not silently disarm it; names are not checked (any name may be armed).
absl::StatusOr<std::map<std::string, Action>> Parse(std::string_view spec);

// Parses NEREID_FAILPOINTS and arms what it names (warning once per armed point). Call once at
// start, before threads that reach failpoints run.
absl::Status InitFromEnv();

// Arms exactly `points` (replacing earlier ones); `max_pause` bounds every pause. For tests.
void Arm(const std::map<std::string, Action>& points, absl::Duration max_pause = absl::Seconds(60));
void DisarmAll();

namespace internal {
extern std::atomic<bool> any_armed;
void HitSlow(std::string_view name);
}  // namespace internal

// Evaluates failpoint `name`: nothing unless it is armed.
inline void Hit(std::string_view name) {
  if (internal::any_armed.load(std::memory_order_relaxed)) [[unlikely]] {
    internal::HitSlow(name);
  }
}

// How many times armed points were reached (pauses included); for tests.
int HitCount(std::string_view name);

}  // namespace nereid::failpoint
