#include "globalmanager/controllers/secret_cache.h"

#include <utility>

#include "common/kube/resource.h"

namespace nereid::gm {

absl::StatusOr<kube::Json> SecretCache::Get(std::string_view ns, std::string_view name) {
  const std::string key = kube::MakeKey(ns, name);
  if (options_.ttl > absl::ZeroDuration()) {
    absl::MutexLock lock(&mu_);
    auto it = entries_.find(key);
    if (it != entries_.end() && clock_->Now() - it->second.read_at < options_.ttl) {
      ++stats_.hits;
      return it->second.secret;
    }
  }
  absl::StatusOr<kube::Json> secret = client_->Get(kube::resources::Secrets(), ns, name);
  absl::MutexLock lock(&mu_);
  ++stats_.misses;
  if (!secret.ok()) {
    entries_.erase(key);  // Whatever was known is in doubt now.
    return secret.status();
  }
  if (options_.ttl > absl::ZeroDuration()) StoreLocked(key, *secret, clock_->Now());
  return secret;
}

void SecretCache::StoreLocked(const std::string& key, kube::Json secret, absl::Time now) {
  if (!entries_.contains(key) && entries_.size() >= options_.max_entries) {
    auto oldest = entries_.begin();
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->second.read_at < oldest->second.read_at) oldest = it;
    }
    if (oldest != entries_.end()) entries_.erase(oldest);
  }
  entries_[key] = Entry{std::move(secret), now};
}

SecretCache::Stats SecretCache::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

}  // namespace nereid::gm
