#pragma once

// Expectations: what a job reconcile is still waiting to see in its informer caches
// (kube-controller-manager's ControllerExpectations). Without them a reconcile
// that runs before the pod informer has delivered the pods it just created would create them
// again (deterministic names make that an AlreadyExists error rather than a duplicate, but a
// deleted pod that has not left the cache yet would be counted as failed twice).
//
// Per job key: outstanding pod/Service adds and deletes, plus a status fence — the
// resourceVersion of the job's own last status write, so a reconcile never starts from a cached
// job older than the status it wrote (upstream does not fence this: a stale cached status could
// recreate pods of a job that just failed). Satisfied when nothing is outstanding, or when the
// entry is older than `timeout` on the Clock (5 minutes, as upstream: a lost event must not wedge a
// job forever). Informer handlers call the *Observed methods (ObservingHandler in
// job_controller_support.h does it). Thread-safe.

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/time/clock.h"

namespace nereid::job {

inline constexpr absl::Duration kExpectationsTimeout = absl::Minutes(5);

class Expectations {
 public:
  explicit Expectations(Clock* clock, absl::Duration timeout = kExpectationsTimeout);

  // Before creating `n` children of `key`. Undo with CreationObserved when the call fails.
  void ExpectCreations(const std::string& key, int n);
  void CreationObserved(const std::string& key);
  // Before deleting the child with `uid`; observed when the informer sees it deleted or being
  // deleted (deletionTimestamp). Tracking uids makes observation idempotent: a pod seen first
  // terminating and then gone is one deletion (kube-controller-manager's UIDTrackingExpectations).
  void ExpectDeletion(const std::string& key, const std::string& uid);
  void DeletionObserved(const std::string& key, const std::string& uid);
  // After writing the job's status: the cache must reach `written_rv` before the next reconcile.
  void ExpectStatus(const std::string& key, const std::string& written_rv);

  // Whether `key` may be reconciled, given the resourceVersion of the job the cache holds.
  bool Satisfied(const std::string& key, const std::string& cached_rv);
  // How long until the entry of `key` expires (zero when satisfied or unknown).
  absl::Duration TimeToExpiry(const std::string& key) const;
  // Forgets `key` (the job was deleted).
  void Delete(const std::string& key);

  // For tests: outstanding adds and deletes.
  std::pair<int, int> Pending(const std::string& key) const;

 private:
  struct Entry {
    int adds = 0;
    std::set<std::string> deletes;  // uids
    std::string status_rv;          // "" when no status write is outstanding.
    absl::Time timestamp;           // When it was last raised.
  };

  Entry& Raise(const std::string& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Clock* const clock_;
  const absl::Duration timeout_;
  mutable absl::Mutex mu_;
  std::map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);
};

// Whether resourceVersion `a` is at least `b`. Kubernetes calls resourceVersions opaque, but every
// server we talk to (etcd-backed, devapiserver, the fake) issues increasing integers; when either
// does not parse, only equality counts.
bool ResourceVersionAtLeast(const std::string& a, const std::string& b);

}  // namespace nereid::job
