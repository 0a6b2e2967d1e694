#pragma once

// In-memory DesiredStateStore and ReportSource (outbox) with the same semantics as the SQLite ones.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "common/net/edge_protocol.h"
#include "localcontroller/cloudlink/desired_state_store.h"
#include "localcontroller/cloudlink/report_source.h"

namespace nereid::lc::testing {

class FakeStore final : public DesiredStateStore {
 public:
  void Put(const edge::v1::Resource& resource) {
    absl::MutexLock lock(&mu_);
    objects_[net::ObjectKey(resource.ref())] = resource;
  }
  // The next `n` Upserts fail with `error` (a local failure such as a full disk).
  void FailNextUpserts(int n, absl::Status error) {
    absl::MutexLock lock(&mu_);
    failures_ = n;
    failure_ = std::move(error);
  }

  absl::StatusOr<std::vector<edge::v1::InventoryItem>> Inventory() override {
    absl::MutexLock lock(&mu_);
    std::vector<edge::v1::InventoryItem> items;
    for (const auto& [key, resource] : objects_) {
      edge::v1::InventoryItem item;
      *item.mutable_ref() = resource.ref();
      item.set_version(resource.version());
      items.push_back(item);
    }
    return items;
  }
  absl::Status Upsert(const edge::v1::Resource& resource) override {
    absl::MutexLock lock(&mu_);
    if (failures_ > 0) {
      --failures_;
      return failure_;
    }
    objects_[net::ObjectKey(resource.ref())] = resource;
    ++upserts_;
    return absl::OkStatus();
  }
  absl::Status Remove(const edge::v1::ObjectRef& ref) override {
    absl::MutexLock lock(&mu_);
    objects_.erase(net::ObjectKey(ref));
    return absl::OkStatus();
  }
  absl::Status RecordSync(absl::Time time) override {
    absl::MutexLock lock(&mu_);
    syncs_.push_back(time);
    return absl::OkStatus();
  }

  // "key@version" of everything held.
  std::vector<std::string> Held() {
    absl::MutexLock lock(&mu_);
    std::vector<std::string> out;
    for (const auto& [key, resource] : objects_) out.push_back(key + "@" + resource.version());
    return out;
  }
  int upserts() {
    absl::MutexLock lock(&mu_);
    return upserts_;
  }
  std::size_t syncs() {
    absl::MutexLock lock(&mu_);
    return syncs_.size();
  }

 private:
  absl::Mutex mu_;
  std::map<std::string, edge::v1::Resource> objects_ ABSL_GUARDED_BY(mu_);
  int failures_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status failure_ ABSL_GUARDED_BY(mu_);
  int upserts_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<absl::Time> syncs_ ABSL_GUARDED_BY(mu_);
};

// Keyed by object + payload type (latest state wins under a new seq), like the SQLite outbox.
class FakeOutbox final : public ReportSource {
 public:
  uint64_t Enqueue(edge::v1::StatusReport report) {
    std::function<void()> wakeup;
    uint64_t seq;
    {
      absl::MutexLock lock(&mu_);
      const std::string key =
          net::ObjectKey(report.ref()) + "#" + std::to_string(report.payload_case());
      for (auto it = entries_.begin(); it != entries_.end(); ++it) {
        if (KeyOf(it->second) == key) {
          entries_.erase(it);
          break;
        }
      }
      seq = ++last_seq_;
      report.set_seq(seq);
      entries_[seq] = std::move(report);
      wakeup = wakeup_;
    }
    if (wakeup) wakeup();
    return seq;
  }

  absl::StatusOr<std::vector<edge::v1::StatusReport>> Pending(int limit,
                                                              uint64_t after_seq) override {
    absl::MutexLock lock(&mu_);
    std::vector<edge::v1::StatusReport> out;
    for (auto it = entries_.upper_bound(after_seq);
         it != entries_.end() && static_cast<int>(out.size()) < limit; ++it) {
      out.push_back(it->second);
    }
    return out;
  }
  absl::Status Ack(uint64_t seq) override {
    absl::MutexLock lock(&mu_);
    if (entries_.erase(seq) > 0) acked_.push_back(seq);
    return absl::OkStatus();
  }
  absl::Status Reject(uint64_t seq, std::string_view reason) override {
    absl::MutexLock lock(&mu_);
    if (entries_.erase(seq) > 0)
      rejected_.push_back(std::to_string(seq) + " " + std::string(reason));
    return absl::OkStatus();
  }
  void SetWakeup(std::function<void()> wakeup) override {
    absl::MutexLock lock(&mu_);
    wakeup_ = std::move(wakeup);
  }

  std::size_t depth() {
    absl::MutexLock lock(&mu_);
    return entries_.size();
  }
  std::vector<uint64_t> acked() {
    absl::MutexLock lock(&mu_);
    return acked_;
  }
  std::vector<std::string> rejected() {
    absl::MutexLock lock(&mu_);
    return rejected_;
  }

 private:
  static std::string KeyOf(const edge::v1::StatusReport& report) {
    return net::ObjectKey(report.ref()) + "#" + std::to_string(report.payload_case());
  }

  absl::Mutex mu_;
  std::map<uint64_t, edge::v1::StatusReport> entries_ ABSL_GUARDED_BY(mu_);
  uint64_t last_seq_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<uint64_t> acked_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> rejected_ ABSL_GUARDED_BY(mu_);
  std::function<void()> wakeup_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nereid::lc::testing
