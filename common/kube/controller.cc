#include "common/kube/controller.h"

#include <exception>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/kube/thread_name.h"
#include "common/log/log.h"

namespace nereid::kube {

Controller::Controller(std::string name, Reconciler* reconciler, ControllerOptions options)
    : name_(std::move(name)),
      reconciler_(reconciler),
      clock_(options.clock != nullptr ? options.clock : Clock::Real()),
      workers_(options.workers > 0 ? options.workers : 1),
      cache_sync_timeout_(options.cache_sync_timeout),
      queue_(WorkQueue::Options{name_, clock_, std::move(options.rate_limiter)}) {}

Controller::~Controller() { Stop(); }

void Controller::Enqueue(const std::string& key, bool resync) {
  if (resync) {
    queue_.AddLowPriority(key);  // Behind every change: a resync must not delay news.
  } else {
    queue_.Add(key);
  }
}

ResourceEventHandlerFuncs Controller::EnqueueHandler() {
  ResourceEventHandlerFuncs funcs;
  funcs.on_add = [this](const ObjectPtr& object) { Enqueue(Key(*object)); };
  funcs.on_update = [this](const ObjectPtr& old_object, const ObjectPtr& object) {
    Enqueue(Key(*object), IsResync(old_object, object));
  };
  funcs.on_delete = [this](const DeletedObject& deleted) {
    std::string key = DeletedKey(deleted);
    if (!key.empty()) Enqueue(key);
  };
  funcs.on_resync = [this](const std::string& key) { Enqueue(key, /*resync=*/true); };
  return funcs;
}

ResourceEventHandlerFuncs Controller::EnqueueOwnerHandler(std::string owner_kind) {
  auto enqueue_owner = [this, owner_kind = std::move(owner_kind)](const ObjectPtr& object,
                                                                  bool resync) {
    if (object == nullptr) return;
    std::optional<OwnerReference> owner = ControllerOf(*object);
    if (!owner || owner->kind != owner_kind || owner->name.empty()) return;
    Enqueue(MakeKey(Namespace(*object), owner->name), resync);
  };
  ResourceEventHandlerFuncs funcs;
  funcs.on_add = [enqueue_owner](const ObjectPtr& object) { enqueue_owner(object, false); };
  funcs.on_update = [enqueue_owner](const ObjectPtr& old_object, const ObjectPtr& object) {
    const bool resync = IsResync(old_object, object);
    // An owner change (adoption, release) concerns both the old and the new owner.
    enqueue_owner(object, resync);
    if (old_object != object) enqueue_owner(old_object, resync);
  };
  funcs.on_delete = [enqueue_owner](const DeletedObject& deleted) {
    enqueue_owner(LastKnownState(deleted), false);
  };
  return funcs;
}

absl::Status Controller::Start(const std::vector<SharedInformer*>& wait_for) {
  {
    absl::MutexLock lock(&mu_);
    if (started_) return absl::OkStatus();
  }
  if (!WaitForCacheSync(wait_for, clock_->Now() + cache_sync_timeout_)) {
    return absl::DeadlineExceededError(absl::StrCat("controller ", name_,
                                                    ": caches did not sync within ",
                                                    absl::FormatDuration(cache_sync_timeout_)));
  }
  absl::MutexLock lock(&mu_);
  if (started_ || queue_.ShuttingDown()) return absl::OkStatus();
  started_ = true;
  for (int i = 0; i < workers_; ++i) threads_.emplace_back([this, i] { Worker(i); });
  LOG(INFO) << "controller " << name_ << ": started " << workers_ << " workers";
  return absl::OkStatus();
}

void Controller::Stop() {
  queue_.ShutDown();
  std::vector<std::thread> threads;
  {
    absl::MutexLock lock(&mu_);
    threads = std::move(threads_);
    threads_.clear();
  }
  for (std::thread& thread : threads) thread.join();
}

Controller::Stats Controller::GetStats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

void Controller::Worker(int index) {
  SetCurrentThreadName(absl::StrCat(name_.substr(0, 10), "-w", index));
  while (ProcessNextWorkItem()) {
  }
}

bool Controller::ProcessNextWorkItem() {
  std::optional<std::string> key = queue_.Get();
  if (!key) return false;

  absl::StatusOr<ReconcileResult> result;
  try {
    result = reconciler_->Reconcile(*key);
  } catch (const std::exception& e) {
    result = absl::InternalError(absl::StrCat("reconciler threw: ", e.what()));
  } catch (...) {
    result = absl::InternalError("reconciler threw a non-standard exception");
  }

  int64_t error = 0;
  int64_t requeue = 0;
  if (!result.ok()) {
    if (absl::IsNotFound(result.status())) {
      // The object is gone: nothing left to do for this key.
      LOG(DEBUG) << "controller " << name_ << ": " << *key << ": " << result.status();
      queue_.Forget(*key);
    } else {
      error = 1;
      LOG(WARNING) << "controller " << name_ << ": " << *key << ": " << result.status()
                   << " (retry " << queue_.NumRequeues(*key) + 1 << ")";
      queue_.AddRateLimited(*key);
    }
  } else if (result->requeue_after > absl::ZeroDuration()) {
    requeue = 1;
    queue_.Forget(*key);
    queue_.AddAfter(*key, result->requeue_after);
  } else if (result->requeue) {
    requeue = 1;
    queue_.AddRateLimited(*key);
  } else {
    queue_.Forget(*key);
  }
  {
    absl::MutexLock lock(&mu_);
    ++stats_.reconciles;
    stats_.errors += error;
    stats_.requeues += requeue;
  }
  queue_.Done(*key);
  return true;
}

}  // namespace nereid::kube
