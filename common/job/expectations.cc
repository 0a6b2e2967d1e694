#include "common/job/expectations.h"

#include <charconv>

namespace nereid::job {

namespace {

bool ParseRv(const std::string& text, uint64_t* out) {
  if (text.empty()) return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

}  // namespace

bool ResourceVersionAtLeast(const std::string& a, const std::string& b) {
  uint64_t va = 0;
  uint64_t vb = 0;
  if (ParseRv(a, &va) && ParseRv(b, &vb)) return va >= vb;
  return a == b;
}

Expectations::Expectations(Clock* clock, absl::Duration timeout)
    : clock_(clock), timeout_(timeout) {}

Expectations::Entry& Expectations::Raise(const std::string& key) {
  Entry& entry = entries_[key];
  entry.timestamp = clock_->Now();
  return entry;
}

void Expectations::ExpectCreations(const std::string& key, int n) {
  absl::MutexLock lock(&mu_);
  Raise(key).adds += n;
}

void Expectations::ExpectDeletion(const std::string& key, const std::string& uid) {
  absl::MutexLock lock(&mu_);
  Raise(key).deletes.insert(uid);
}

void Expectations::CreationObserved(const std::string& key) {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(key);
  if (it != entries_.end() && it->second.adds > 0) --it->second.adds;
}

void Expectations::DeletionObserved(const std::string& key, const std::string& uid) {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(key);
  if (it != entries_.end()) it->second.deletes.erase(uid);
}

void Expectations::ExpectStatus(const std::string& key, const std::string& written_rv) {
  absl::MutexLock lock(&mu_);
  Raise(key).status_rv = written_rv;
}

bool Expectations::Satisfied(const std::string& key, const std::string& cached_rv) {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return true;
  Entry& entry = it->second;
  if (!entry.status_rv.empty() && ResourceVersionAtLeast(cached_rv, entry.status_rv)) {
    entry.status_rv.clear();
  }
  if (entry.adds <= 0 && entry.deletes.empty() && entry.status_rv.empty()) return true;
  return clock_->Now() - entry.timestamp >= timeout_;
}

absl::Duration Expectations::TimeToExpiry(const std::string& key) const {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return absl::ZeroDuration();
  absl::Duration left = it->second.timestamp + timeout_ - clock_->Now();
  return left > absl::ZeroDuration() ? left : absl::ZeroDuration();
}

void Expectations::Delete(const std::string& key) {
  absl::MutexLock lock(&mu_);
  entries_.erase(key);
}

std::pair<int, int> Expectations::Pending(const std::string& key) const {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return {0, 0};
  return {it->second.adds, static_cast<int>(it->second.deletes.size())};
}

}  // namespace nereid::job
