#include "globalmanager/controllers/status_fence.h"

#include <cstdint>

#include "absl/strings/numbers.h"
#include "common/strings/absl_compat.h"

namespace nereid::gm {
namespace {

// resourceVersions are opaque to clients in general, but every API server we talk to (etcd's
// revisions, devapiserver's counter) hands out increasing integers; anything else is "unknown".
bool AtLeast(std::string_view version, std::string_view than) {
  uint64_t a = 0, b = 0;
  return absl::SimpleAtoi(ToAbsl(version), &a) && absl::SimpleAtoi(ToAbsl(than), &b) && a >= b;
}

}  // namespace

StatusFence& StatusFence::Global() {
  static StatusFence* const fence = new StatusFence();  // never destroyed (no exit-time dtor)
  return *fence;
}

void StatusFence::Written(const std::string& key, std::string_view resource_version) {
  const absl::Time now = absl::Now();
  absl::MutexLock lock(&mu_);
  entries_[key] = Entry{std::string(resource_version), now};
  if (now >= next_expiry_) ExpireLocked(now);
}

bool StatusFence::Covers(const std::string& key, std::string_view cached_version) {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return true;
  if (cached_version != it->second.resource_version &&
      !AtLeast(cached_version, it->second.resource_version)) {
    return false;
  }
  entries_.erase(it);  // The cache has caught up: nothing left to fence.
  return true;
}

size_t StatusFence::size() const {
  absl::MutexLock lock(&mu_);
  return entries_.size();
}

void StatusFence::ExpireLocked(absl::Time now) {
  absl::erase_if(entries_, [&](const auto& entry) {
    return now - entry.second.written > kStatusFenceHorizon;
  });
  next_expiry_ = now + kStatusFenceHorizon / 10;
}

}  // namespace nereid::gm
