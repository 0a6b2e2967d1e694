#pragma once

// StatusFence: the resourceVersion of each object's last status write by this process, so that
// WriteStatus can tell whether an informer's copy has seen that write. A copy that has may answer
// "nothing to change" by itself — no GET per resync or per identical report; one that has not (or
// whose version cannot be compared) must be confirmed by a live read, or our own last write could
// be missed and never corrected. An entry goes once the cache has caught up with it, so the map
// holds only writes in flight; entries of objects that vanished meanwhile expire after
// `kStatusFenceHorizon` (a cache that far behind is broken anyway). Thread-safe.

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace nereid::gm {

inline constexpr absl::Duration kStatusFenceHorizon = absl::Minutes(10);

class StatusFence {
 public:
  // The one the process's WriteStatus calls share.
  static StatusFence& Global();

  // `key` names the object (with its client, resource and uid: see status_writer.cc).
  void Written(const std::string& key, std::string_view resource_version);
  // Whether a copy at `cached_version` has seen our last write of `key` (true when there is none).
  bool Covers(const std::string& key, std::string_view cached_version);

  size_t size() const;

 private:
  struct Entry {
    std::string resource_version;
    absl::Time written;
  };
  void ExpireLocked(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);
  absl::Time next_expiry_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

}  // namespace nereid::gm
