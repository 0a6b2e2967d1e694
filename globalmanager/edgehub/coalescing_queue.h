#pragma once

// A bounded FIFO of keyed entries where a newer entry for a key replaces the unsent older one in
// place (as client-go's workqueue keeps one entry per key): the latest version of an object
// replaces an older unsent one, and an upsert followed by a remove leaves only the remove. The
// entry keeps its position, so an object updated often neither starves nor is starved. Bounded by
// capacity distinct keys. Not thread-safe: the owner locks.

#include <cstddef>
#include <iterator>
#include <list>
#include <optional>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"

namespace nereid::gm {

template <typename T>
class CoalescingQueue {
 public:
  enum class PushResult { kAdded, kReplaced, kFull };

  explicit CoalescingQueue(std::size_t capacity) : capacity_(capacity) {}

  // Adds `value` under `key`, or replaces the value already queued under `key` (keeping its
  // position). kFull (nothing changed) when `key` is new and the queue holds capacity keys.
  PushResult Push(const std::string& key, T value) {
    if (auto it = index_.find(key); it != index_.end()) {
      it->second->second = std::move(value);
      return PushResult::kReplaced;
    }
    if (order_.size() >= capacity_) return PushResult::kFull;
    order_.emplace_back(key, std::move(value));
    index_.emplace(key, std::prev(order_.end()));
    return PushResult::kAdded;
  }

  // The oldest entry, removed from the queue.
  std::optional<std::pair<std::string, T>> Pop() {
    if (order_.empty()) return std::nullopt;
    std::pair<std::string, T> front = std::move(order_.front());
    index_.erase(front.first);
    order_.pop_front();
    return front;
  }

  const T* Find(const std::string& key) const {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &it->second->second;
  }

  bool Erase(const std::string& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return false;
    order_.erase(it->second);
    index_.erase(it);
    return true;
  }

  void Clear() {
    order_.clear();
    index_.clear();
  }

  std::size_t size() const { return order_.size(); }
  bool empty() const { return order_.empty(); }
  std::size_t capacity() const { return capacity_; }

 private:
  std::size_t capacity_;
  std::list<std::pair<std::string, T>> order_;
  absl::flat_hash_map<std::string, typename std::list<std::pair<std::string, T>>::iterator> index_;
};

}  // namespace nereid::gm
