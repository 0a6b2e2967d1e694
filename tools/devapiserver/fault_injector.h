#pragma once

// FaultInjector: failures a test asks devapiserver for, so clients' retry, backoff
// and relist paths run against a real server: the next N requests, or those within a time window,
// answer an error status (429 with Retry-After, 500, ...), optionally only those whose User-Agent
// contains a given string (the GM's, while kubectl goes on working), or only one resource and
// verb (a 403 on reading Secrets, as a missing RoleBinding gives). Configured over
// POST /debug/faults (api_server.cc), which exists only with --enable-debug-faults and answers
// loopback clients only. Thread-safe.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/kube/object.h"
#include "common/time/clock.h"
#include "tools/devapiserver/request_counter.h"

namespace nereid::devapi {

struct FaultRule {
  int code = 500;                    // the HTTP status every matching request gets
  int64_t retry_after_seconds = -1;  // Retry-After header; < 0: none
  int64_t count = -1;                // how many requests to fail; < 0: no limit
  absl::Time until = absl::InfiniteFuture();  // fail only before this
  std::string user_agent;            // fail only requests whose User-Agent contains it; "": all
  std::string resource;              // fail only this resource ("secrets"); "": all
  std::string verb;                  // fail only this verb ("get", "list", ...); "": all
};

// The answer an intercepted request gets.
struct InjectedFault {
  int code = 500;
  int64_t retry_after_seconds = -1;
};

class FaultInjector {
 public:
  explicit FaultInjector(Clock* clock = Clock::Real()) : clock_(clock) {}

  // The fault for a request with `user_agent` (of `request`'s verb and resource), if the active
  // rule matches it (and counts it).
  std::optional<InjectedFault> Intercept(std::string_view user_agent,
                                         const RequestKind& request = {});

  // A rule from POST /debug/faults' body: {"code": 429, "retryAfterSeconds": 1, "count": 100,
  // "durationSeconds": 5, "userAgent": "nereid-globalmanager", "resource": "secrets",
  // "verb": "get"}; `code` is required (400..599). InvalidArgument for anything else.
  static absl::StatusOr<FaultRule> RuleFromJson(const kube::Json& body, absl::Time now);

  void Set(FaultRule rule);
  void Clear();
  // {"active": bool, "injected": N, "rule": {...}} — injected counts every fault answered since
  // the last Set.
  kube::Json Snapshot() const;

 private:
  bool ActiveLocked(absl::Time now) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Clock* const clock_;
  mutable absl::Mutex mu_;
  std::optional<FaultRule> rule_ ABSL_GUARDED_BY(mu_);
  int64_t injected_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace nereid::devapi
