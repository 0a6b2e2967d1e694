#include "common/kube/shared_informer.h"

#include <algorithm>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/kube/thread_name.h"
#include "common/log/log.h"

namespace nereid::kube {
namespace {

Indexers WithDefaults(Indexers extra) {
  Indexers all = DefaultIndexers();
  for (auto& [name, func] : extra) all.insert_or_assign(name, std::move(func));
  return all;
}

ReflectorOptions ReflectorOptionsFor(const InformerOptions& options) {
  ReflectorOptions reflector = options.reflector;
  reflector.ns = options.ns;
  reflector.label_selector = options.label_selector;
  reflector.field_selector = options.field_selector;
  return reflector;
}

}  // namespace

SharedInformer::SharedInformer(KubeClient* client, Resource resource, InformerOptions options,
                               Clock* clock)
    : resource_(std::move(resource)),
      clock_(clock != nullptr ? clock : Clock::Real()),
      resync_period_(options.resync_period),
      indexer_(WithDefaults(std::move(options.indexers)),
               options.cache_encoding.value_or(CacheEncoding::kDecoded)),
      reflector_(std::make_unique<Reflector>(client, resource_, static_cast<ReflectorStore*>(this),
                                             clock_, ReflectorOptionsFor(options))) {}

SharedInformer::~SharedInformer() { Stop(); }

void SharedInformer::AddEventHandler(ResourceEventHandlerFuncs handler) {
  absl::MutexLock lock(&mu_);
  handlers_.push_back(std::make_shared<const ResourceEventHandlerFuncs>(std::move(handler)));
  const size_t index = handlers_.size() - 1;
  // Catch the late handler up with the cache. Holding mu_ keeps the snapshot consistent with the
  // notifications queued after it.
  for (ObjectPtr& object : indexer_.List()) {
    Notification notification{Notification::Kind::kAdd, nullptr, std::move(object), {}};
    notification.first = index;
    notification.end = index + 1;
    pending_.push_back(std::move(notification));
  }
}

absl::Status SharedInformer::AddIndexers(Indexers indexers) {
  return indexer_.AddIndexers(std::move(indexers));
}

void SharedInformer::Start() {
  {
    absl::MutexLock lock(&mu_);
    if (started_ || stopped_) return;
    started_ = true;
  }
  dispatcher_ = std::thread([this] { Dispatch(); });
  reflector_->Start();
}

void SharedInformer::Stop() {
  reflector_->Stop();
  {
    absl::MutexLock lock(&mu_);
    stopped_ = true;
  }
  if (dispatcher_.joinable()) dispatcher_.join();
}

bool SharedInformer::HasSynced() const {
  absl::MutexLock lock(&mu_);
  return synced_;
}

bool SharedInformer::WaitForSync(absl::Time deadline) {
  absl::MutexLock lock(&mu_);
  auto done = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return synced_ || stopped_; };
  clock_->AwaitWithDeadline(&mu_, absl::Condition(&done), deadline);
  return synced_;
}

void SharedInformer::QueueLocked(Notification notification) {
  notification.first = 0;
  notification.end = handlers_.size();
  pending_.push_back(std::move(notification));
}

void SharedInformer::Replace(std::vector<ObjectPtr> objects, const std::string& resource_version) {
  absl::MutexLock lock(&mu_);
  Indexer::ReplaceResult changes = indexer_.Replace(std::move(objects));
  for (ObjectPtr& object : changes.added) {
    QueueLocked({Notification::Kind::kAdd, nullptr, std::move(object), {}});
  }
  for (auto& [old_object, new_object] : changes.updated) {
    QueueLocked({Notification::Kind::kUpdate, std::move(old_object), std::move(new_object), {}});
  }
  for (ObjectPtr& object : changes.deleted) {
    // Missed while the watch was down: we cannot know the final state.
    std::string key = Key(*object);
    LOG(DEBUG) << "informer " << resource_.QualifiedName() << ": " << key
               << " vanished during a relist";
    QueueLocked({Notification::Kind::kDelete, nullptr, nullptr,
                 DeletedFinalStateUnknown{std::move(key), std::move(object)}});
  }
  if (!sync_queued_) {
    sync_queued_ = true;
    QueueLocked({Notification::Kind::kSynced, nullptr, nullptr, {}});
  }
}

void SharedInformer::Add(ObjectPtr object) {
  absl::MutexLock lock(&mu_);
  ObjectPtr old = indexer_.Upsert(object);
  if (old) {
    QueueLocked({Notification::Kind::kUpdate, std::move(old), std::move(object), {}});
  } else {
    QueueLocked({Notification::Kind::kAdd, nullptr, std::move(object), {}});
  }
}

void SharedInformer::Update(ObjectPtr object) { Add(std::move(object)); }

void SharedInformer::Delete(ObjectPtr object) {
  absl::MutexLock lock(&mu_);
  indexer_.Remove(Key(*object));
  QueueLocked({Notification::Kind::kDelete, nullptr, nullptr, DeletedObject(std::move(object))});
}

void SharedInformer::Deliver(const ResourceEventHandlerFuncs& handler,
                             const Notification& notification) {
  switch (notification.kind) {
    case Notification::Kind::kAdd:
      if (handler.on_add) handler.on_add(notification.object);
      break;
    case Notification::Kind::kUpdate:
      if (handler.on_update) handler.on_update(notification.old_object, notification.object);
      break;
    case Notification::Kind::kDelete:
      if (handler.on_delete) handler.on_delete(notification.deleted);
      break;
    case Notification::Kind::kResync:
      if (handler.on_resync) {
        handler.on_resync(notification.key);
      } else if (handler.on_update) {
        handler.on_update(notification.object, notification.object);
      }
      break;
    case Notification::Kind::kSynced:
      break;
  }
}

void SharedInformer::Dispatch() {
  SetCurrentThreadName(absl::StrCat("inf-", resource_.resource));
  const bool resync = resync_period_ > absl::ZeroDuration();
  absl::Time next_resync = absl::InfiniteFuture();
  // A resync replays the cache (handlers re-check every object: level-based catch-up) a chunk of
  // keys at a time, each as cached when its turn comes, with the watch's news delivered first
  // between chunks: replayed in one piece, 100,000 objects held a fresh event behind them for
  // over a second (bench/RESULTS.md, "10,000 nodes on the product's build").
  constexpr size_t kReplayChunk = 128;
  std::vector<std::string> replay;  // Keys still to replay, taken from the back.
  absl::MutexLock lock(&mu_);
  while (true) {
    auto ready = [this, &replay]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return stopped_ || !pending_.empty() || !replay.empty();
    };
    clock_->AwaitWithDeadline(&mu_, absl::Condition(&ready), next_resync);
    if (stopped_) return;
    if (resync && synced_ && clock_->Now() >= next_resync) {
      replay = indexer_.ListKeys();  // A replay still under way starts over.
      next_resync = clock_->Now() + resync_period_;
    }
    if (pending_.empty() && !replay.empty()) {
      const bool keys_only = std::all_of(handlers_.begin(), handlers_.end(), [](const auto& h) {
        return h->on_resync != nullptr;
      });
      for (size_t n = 0; n < kReplayChunk && !replay.empty(); ++n) {
        Notification notification{Notification::Kind::kResync, nullptr, nullptr, {},
                                  std::move(replay.back())};
        replay.pop_back();
        if (!keys_only) notification.object = indexer_.Get(notification.key);
        // Deleted since the resync began: its delete was news.
        if (keys_only ? !indexer_.Contains(notification.key) : notification.object == nullptr) {
          continue;
        }
        QueueLocked(std::move(notification));
      }
    }
    if (pending_.empty()) continue;
    std::vector<Notification> batch = std::move(pending_);
    pending_.clear();
    const std::vector<std::shared_ptr<const ResourceEventHandlerFuncs>> handlers = handlers_;
    mu_.Unlock();
    bool synced_now = false;
    for (const Notification& notification : batch) {
      if (notification.kind == Notification::Kind::kSynced) synced_now = true;
      for (size_t i = notification.first; i < notification.end && i < handlers.size(); ++i) {
        try {
          Deliver(*handlers[i], notification);
        } catch (const std::exception& e) {
          LOG(ERROR) << "informer " << resource_.QualifiedName() << ": handler threw: " << e.what();
        }
      }
    }
    mu_.Lock();
    if (synced_now && !synced_) {
      synced_ = true;
      if (resync) next_resync = clock_->Now() + resync_period_;
    }
  }
}

bool WaitForCacheSync(const std::vector<SharedInformer*>& informers, absl::Time deadline) {
  for (SharedInformer* informer : informers) {
    if (!informer->WaitForSync(deadline)) return false;
  }
  return true;
}

}  // namespace nereid::kube
