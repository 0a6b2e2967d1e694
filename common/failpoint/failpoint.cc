#include "common/failpoint/failpoint.h"

#include <cstdlib>

#include "absl/base/thread_annotations.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "common/log/log.h"
#include "common/strings/absl_compat.h"

namespace nereid::failpoint {
namespace internal {
std::atomic<bool> any_armed{false};
}  // namespace internal

namespace {

struct Registry {
  absl::Mutex mu;
  std::map<std::string, Action, std::less<>> points ABSL_GUARDED_BY(mu);
  std::map<std::string, int, std::less<>> hits ABSL_GUARDED_BY(mu);
  absl::Duration max_pause ABSL_GUARDED_BY(mu) = absl::Seconds(60);
};

Registry& GetRegistry() {
  static Registry* registry = new Registry();  // never destroyed (no exit-time destructor)
  return *registry;
}

std::string_view ActionName(Action action) { return action == Action::kPause ? "pause" : "off"; }

}  // namespace

absl::StatusOr<std::map<std::string, Action>> Parse(std::string_view spec) {
  std::map<std::string, Action> points;
  for (absl::string_view entry : absl::StrSplit(ToAbsl(spec), absl::ByAnyChar(";,"))) {
    entry = absl::StripAsciiWhitespace(entry);
    if (entry.empty()) continue;
    const size_t eq = entry.find('=');
    if (eq == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat(kEnvVar, ": \"", entry, "\" is not NAME=ACTION"));
    }
    const std::string name(absl::StripAsciiWhitespace(entry.substr(0, eq)));
    const std::string action = absl::AsciiStrToLower(absl::StripAsciiWhitespace(entry.substr(eq + 1)));
    if (name.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(kEnvVar, ": \"", entry, "\" has no name"));
    }
    if (action == "pause") {
      points[name] = Action::kPause;
    } else if (action == "off") {
      points[name] = Action::kOff;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(kEnvVar, ": ", name, ": unknown action \"",
                                                     action, "\" (off, pause)"));
    }
  }
  return points;
}

absl::Status InitFromEnv() {
  const char* spec = std::getenv(kEnvVar);
  if (spec == nullptr || *spec == '\0') return absl::OkStatus();
  absl::StatusOr<std::map<std::string, Action>> points = Parse(spec);
  if (!points.ok()) return points.status();
  for (const auto& [name, action] : *points) {
    LOG(WARNING) << "failpoint " << name << " armed (" << ActionName(action) << ") by "
                 << kEnvVar << ": test-only, never set it in production";
  }
  Arm(*points);
  return absl::OkStatus();
}

void Arm(const std::map<std::string, Action>& points, absl::Duration max_pause) {
  Registry& r = GetRegistry();
  absl::MutexLock lock(&r.mu);
  r.points.clear();
  bool any = false;
  for (const auto& [name, action] : points) {
    if (action == Action::kOff) continue;
    r.points.emplace(name, action);
    any = true;
  }
  r.hits.clear();
  r.max_pause = max_pause;
  internal::any_armed.store(any, std::memory_order_relaxed);
}

void DisarmAll() { Arm({}); }

int HitCount(std::string_view name) {
  Registry& r = GetRegistry();
  absl::MutexLock lock(&r.mu);
  auto it = r.hits.find(name);
  return it == r.hits.end() ? 0 : it->second;
}

void internal::HitSlow(std::string_view name) {
  Registry& r = GetRegistry();
  absl::Duration pause;
  {
    absl::MutexLock lock(&r.mu);
    auto it = r.points.find(name);
    if (it == r.points.end() || it->second != Action::kPause) return;
    ++r.hits[std::string(name)];
    pause = r.max_pause;
  }
  // The marker the crash test waits for; then the thread stays here until the test kills the
  // process (or the bound passes).
  LOG(WARNING) << "failpoint " << name << ": paused (for at most " << pause << ")";
  absl::SleepFor(pause);
  LOG(WARNING) << "failpoint " << name << ": released";
}

}  // namespace nereid::failpoint
