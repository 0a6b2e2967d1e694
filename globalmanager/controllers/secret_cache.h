#pragma once

// SecretCache: the Secrets the GM read lately, so that the objects naming one Secret, and the
// many reconciles of one object (its own status writes, resyncs, credential rechecks), share one
// GET instead of each making its own. Least privilege is kept: a Secret is only ever read by name,
// in the namespace of the object that names it, on demand (S3CredentialReader) — no list, no
// watch, nothing cluster-wide.
//
//   Get(ns, name)  the Secret as read less than `ttl` ago, else one GET; an answer that is not a
//                  Secret (403, 404, a transient error) is never cached and drops the entry, so
//                  a RoleBinding granted or a Secret created is seen at the next read.
// The entry keeps the Secret's resourceVersion (the caller folds it into edge versions), so a
// rotated Secret is noticed at most `ttl` later than without the cache. At most `max_entries`
// Secrets are kept; a new one evicts the one read longest ago. A `ttl` of zero disables it (every
// Get is a GET). Thread-safe; a GET is made outside the lock.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/kube/client.h"
#include "common/kube/object.h"
#include "common/time/clock.h"

namespace nereid::gm {

struct SecretCacheOptions {
  absl::Duration ttl = absl::Seconds(30);
  size_t max_entries = 1024;
};

class SecretCache {
 public:
  SecretCache(kube::KubeClient* client, Clock* clock, SecretCacheOptions options = {})
      : client_(client), clock_(clock), options_(options) {}

  absl::StatusOr<kube::Json> Get(std::string_view ns, std::string_view name);

  struct Stats {
    int64_t hits = 0;    // answered from the cache
    int64_t misses = 0;  // a GET was made
  };
  Stats stats() const;

 private:
  struct Entry {
    kube::Json secret;
    absl::Time read_at;
  };
  void StoreLocked(const std::string& key, kube::Json secret, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  kube::KubeClient* const client_;
  Clock* const clock_;
  const SecretCacheOptions options_;
  mutable absl::Mutex mu_;
  std::map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);  // "<ns>/<name>"
  Stats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nereid::gm
