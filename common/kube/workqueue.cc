#include "common/kube/workqueue.h"

namespace nereid::kube {

WorkQueue::WorkQueue() : WorkQueue(Options{}) {}

WorkQueue::WorkQueue(Options options)
    : name_(std::move(options.name)),
      clock_(options.clock != nullptr ? options.clock : Clock::Real()),
      rate_limiter_(options.rate_limiter != nullptr ? std::move(options.rate_limiter)
                                                    : DefaultControllerRateLimiter(clock_)) {}

WorkQueue::~WorkQueue() { ShutDown(); }

void WorkQueue::AddLocked(const std::string& key, absl::Time now, bool low) {
  if (shutting_down_) return;
  const bool processing = processing_.contains(key);
  if (!dirty_.insert(key).second) {
    // Already queued or marked to run again. News for a key waiting in the low lane moves it to
    // the normal one (its low_ entry is skipped from now on).
    if (!low && low_keys_.erase(key) > 0 && !processing) {
      --low_ready_;
      queue_.push_back(key);
    }
    return;
  }
  ++adds_;
  if (wait_observer_ != nullptr) added_at_.emplace(key, now);
  if (low) low_keys_.insert(key);
  // A key being processed runs again after Done(), never concurrently.
  if (processing) return;
  if (low) {
    low_.push_back(key);
    ++low_ready_;
  } else {
    queue_.push_back(key);
  }
}

void WorkQueue::Add(const std::string& key) {
  absl::MutexLock lock(&mu_);
  AddLocked(key, clock_->Now());
}

void WorkQueue::AddLowPriority(const std::string& key) {
  absl::MutexLock lock(&mu_);
  AddLocked(key, clock_->Now(), /*low=*/true);
}

void WorkQueue::AddAfter(const std::string& key, absl::Duration delay) {
  absl::MutexLock lock(&mu_);
  if (shutting_down_) return;
  if (delay <= absl::ZeroDuration()) {
    AddLocked(key, clock_->Now());
    return;
  }
  const absl::Time ready = clock_->Now() + delay;
  if (auto it = waiting_ids_.find(key); it != waiting_ids_.end()) {
    if (it->second.first <= ready) return;  // Already due earlier.
    waiting_.erase(it->second);
    waiting_ids_.erase(it);
  }
  const WaitingId id{ready, waiting_seq_++};
  waiting_.emplace(id, key);
  waiting_ids_.emplace(key, id);
  ++waiting_generation_;
}

void WorkQueue::AddRateLimited(const std::string& key) {
  // Ask the limiter outside our lock: it has its own, and may be shared.
  const absl::Duration delay = rate_limiter_->When(key);
  {
    absl::MutexLock lock(&mu_);
    if (shutting_down_) return;
    ++retries_;
  }
  AddAfter(key, delay);
}

void WorkQueue::Forget(const std::string& key) { rate_limiter_->Forget(key); }

int WorkQueue::NumRequeues(const std::string& key) { return rate_limiter_->NumRequeues(key); }

void WorkQueue::PromoteReadyLocked(absl::Time now) {
  while (!waiting_.empty() && waiting_.begin()->first.first <= now) {
    std::string key = std::move(waiting_.begin()->second);
    const absl::Time due = waiting_.begin()->first.first;
    waiting_.erase(waiting_.begin());
    waiting_ids_.erase(key);
    AddLocked(key, due);  // it waits in the queue from when it was due
  }
}

void WorkQueue::SetWaitObserver(WaitObserver observer) {
  absl::MutexLock lock(&mu_);
  wait_observer_ =
      observer ? std::make_shared<const WaitObserver>(std::move(observer)) : nullptr;
  if (wait_observer_ == nullptr) added_at_.clear();
}

std::optional<std::string> WorkQueue::Get() {
  std::shared_ptr<const WaitObserver> observer;
  absl::Duration waited;
  std::optional<std::string> key;
  {
    absl::MutexLock lock(&mu_);
    key = NextLocked(&waited);
    if (key.has_value()) observer = wait_observer_;
  }
  if (observer != nullptr) (*observer)(waited);
  return key;
}

std::optional<std::string> WorkQueue::NextLocked(absl::Duration* waited) {
  while (true) {
    const absl::Time now = clock_->Now();
    PromoteReadyLocked(now);
    std::optional<std::string> next;
    if (!queue_.empty()) {
      next = std::move(queue_.front());
      queue_.pop_front();
    } else {
      next = PopLowLocked();
    }
    if (next.has_value()) {
      std::string key = *std::move(next);
      processing_.insert(key);
      dirty_.erase(key);
      auto added = added_at_.find(key);
      *waited = added == added_at_.end() ? absl::ZeroDuration() : now - added->second;
      if (added != added_at_.end()) added_at_.erase(added);
      return key;
    }
    if (shutting_down_) return std::nullopt;
    const absl::Time deadline =
        waiting_.empty() ? absl::InfiniteFuture() : waiting_.begin()->first.first;
    const uint64_t generation = waiting_generation_;
    auto wake = [this, generation]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return !queue_.empty() || low_ready_ > 0 || shutting_down_ ||
             waiting_generation_ != generation;
    };
    clock_->AwaitWithDeadline(&mu_, absl::Condition(&wake), deadline);
  }
}

std::optional<std::string> WorkQueue::PopLowLocked() {
  if (low_ready_ == 0) {
    low_.clear();  // Only entries left behind: drop them rather than let them pile up.
    return std::nullopt;
  }
  while (!low_.empty()) {
    std::string key = std::move(low_.front());
    low_.pop_front();
    // Skip entries left behind by a key moved forward, or re-added low while processing (Done
    // queues that one again).
    if (processing_.contains(key) || !low_keys_.contains(key)) continue;
    low_keys_.erase(key);
    --low_ready_;
    return key;
  }
  return std::nullopt;
}

void WorkQueue::Done(const std::string& key) {
  absl::MutexLock lock(&mu_);
  if (processing_.erase(key) == 0) return;
  // Re-added while it was processed: run it again (even while shutting down, so the last change
  // is not lost before the queue drains), in the lane of its adds.
  if (!dirty_.contains(key)) return;
  if (low_keys_.contains(key)) {
    low_.push_back(key);
    ++low_ready_;
  } else {
    queue_.push_back(key);
  }
}

void WorkQueue::ShutDownLocked() {
  shutting_down_ = true;
  waiting_.clear();
  waiting_ids_.clear();
}

void WorkQueue::ShutDown() {
  absl::MutexLock lock(&mu_);
  ShutDownLocked();
}

void WorkQueue::ShutDownWithDrain() {
  absl::MutexLock lock(&mu_);
  ShutDownLocked();
  auto drained = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return processing_.empty(); };
  mu_.Await(absl::Condition(&drained));
}

bool WorkQueue::ShuttingDown() const {
  absl::MutexLock lock(&mu_);
  return shutting_down_;
}

size_t WorkQueue::Len() {
  absl::MutexLock lock(&mu_);
  PromoteReadyLocked(clock_->Now());
  return queue_.size() + low_ready_;
}

WorkQueue::Metrics WorkQueue::GetMetrics() {
  absl::MutexLock lock(&mu_);
  PromoteReadyLocked(clock_->Now());
  return Metrics{queue_.size() + low_ready_, waiting_.size(), processing_.size(), adds_,
                 retries_};
}

}  // namespace nereid::kube
