#include "globalmanager/controllers/created_children.h"

#include <memory>
#include <set>

namespace nereid::gm {

CreatedChildren::CreatedChildren(Clock* clock, kube::SharedInformer* informer) : clock_(clock) {
  // Whatever the informer delivers about an object supersedes what we created: it is in the cache
  // now, or was deleted (maybe before we ever looked at the cache).
  auto forget = [this](const std::string& key) {
    absl::MutexLock lock(&mu_);
    entries_.erase(key);
  };
  kube::ResourceEventHandlerFuncs handler;
  handler.on_add = [forget](const kube::ObjectPtr& object) { forget(kube::Key(*object)); };
  handler.on_update = [forget](const kube::ObjectPtr&, const kube::ObjectPtr& after) {
    forget(kube::Key(*after));
  };
  handler.on_delete = [forget](const kube::DeletedObject& deleted) {
    forget(kube::DeletedKey(deleted));
  };
  handler.on_resync = forget;
  informer->AddEventHandler(std::move(handler));
}

void CreatedChildren::Created(const kube::Json& object) {
  const absl::Time now = clock_->Now();
  absl::MutexLock lock(&mu_);
  for (auto it = entries_.begin(); it != entries_.end();) {
    it = now - it->second.created > kCreatedChildrenHorizon ? entries_.erase(it) : std::next(it);
  }
  entries_[kube::Key(object)] = Entry{std::make_shared<const kube::Json>(object), now};
}

kube::ObjectPtr CreatedChildren::Get(const kube::Lister& lister, std::string_view ns,
                                     std::string_view name) const {
  const std::string key = kube::MakeKey(ns, name);
  // The cache is read under our lock: the informer's handler (which forgets an entry after the
  // cache has the object) must not run between that read and ours, or the object is in neither.
  absl::MutexLock lock(&mu_);
  absl::StatusOr<kube::ObjectPtr> cached = lister.Get(ns, name);
  auto it = entries_.find(key);
  if (cached.ok()) {
    if (it != entries_.end()) entries_.erase(it);  // The cache has caught up.
    return *std::move(cached);
  }
  if (it == entries_.end()) return nullptr;
  if (clock_->Now() - it->second.created > kCreatedChildrenHorizon) {
    entries_.erase(it);
    return nullptr;
  }
  return it->second.object;
}

std::vector<kube::ObjectPtr> CreatedChildren::List(const kube::Lister& lister, std::string_view ns,
                                                   const kube::LabelSelector& selector) const {
  absl::MutexLock lock(&mu_);  // Around the cache read too: see Get.
  std::vector<kube::ObjectPtr> objects = lister.List(ns, selector);
  std::set<std::string> cached;
  for (const kube::ObjectPtr& object : objects) cached.insert(kube::Key(*object));
  const absl::Time now = clock_->Now();
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (cached.count(it->first) > 0 || now - it->second.created > kCreatedChildrenHorizon) {
      it = entries_.erase(it);  // Shown by the cache (or too old to believe).
      continue;
    }
    const kube::Json& object = *it->second.object;
    if (kube::Namespace(object) == ns && selector.Matches(kube::Labels(object))) {
      objects.push_back(it->second.object);
    }
    ++it;
  }
  return objects;
}

}  // namespace nereid::gm
