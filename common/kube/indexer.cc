#include "common/kube/indexer.h"

#include <exception>

#include "absl/strings/str_cat.h"
#include "common/log/log.h"

namespace nereid::kube {

std::vector<std::string> NamespaceIndexFunc(const Json& object) {
  std::string ns = Namespace(object);
  if (ns.empty()) return {};
  return {std::move(ns)};
}

std::vector<std::string> ControllerUidIndexFunc(const Json& object) {
  std::optional<OwnerReference> owner = ControllerOf(object);
  if (!owner || owner->uid.empty()) return {};
  return {std::move(owner->uid)};
}

IndexFunc FieldIndexFunc(std::string dotted_path) {
  return [path = std::move(dotted_path)](const Json& object) -> std::vector<std::string> {
    std::string value = StringAt(object, path);
    if (value.empty()) return {};
    return {std::move(value)};
  };
}

Indexers DefaultIndexers() {
  return {{kNamespaceIndex, NamespaceIndexFunc}, {kControllerUidIndex, ControllerUidIndexFunc}};
}

Indexer::Indexer(Indexers indexers) : indexers_(std::move(indexers)) {}

std::vector<std::string> Indexer::Evaluate(const std::string& index_name, const IndexFunc& func,
                                           const Json& object) {
  try {
    return func(object);
  } catch (const std::exception& e) {
    LOG(ERROR) << "index " << index_name << " failed for " << Key(object) << ": " << e.what();
    return {};
  }
}

void Indexer::IndexLocked(const std::string& key, const ObjectPtr& old_object,
                          const ObjectPtr& new_object) {
  for (const auto& [name, func] : indexers_) {
    Index& index = indexes_[name];
    std::vector<std::string> old_values;
    std::vector<std::string> new_values;
    if (old_object) old_values = Evaluate(name, func, *old_object);
    if (new_object) new_values = Evaluate(name, func, *new_object);
    if (old_values == new_values) continue;  // The common case: nothing to move.
    for (const std::string& value : old_values) {
      auto it = index.find(value);
      if (it == index.end()) continue;
      it->second.erase(key);
      if (it->second.empty()) index.erase(it);  // Keep the index from growing without bound.
    }
    for (const std::string& value : new_values) index[value].insert(key);
  }
}

absl::Status Indexer::AddIndexers(Indexers indexers) {
  absl::MutexLock lock(&mu_);
  for (const auto& [name, func] : indexers) {
    if (indexers_.contains(name)) {
      return absl::AlreadyExistsError(absl::StrCat("indexer \"", name, "\" already exists"));
    }
  }
  for (auto& [name, func] : indexers) {
    Index& index = indexes_[name];
    for (const auto& [key, object] : items_) {
      for (const std::string& value : Evaluate(name, func, *object)) index[value].insert(key);
    }
    indexers_.emplace(name, std::move(func));
  }
  return absl::OkStatus();
}

ObjectPtr Indexer::Upsert(ObjectPtr object) {
  const std::string key = Key(*object);
  absl::MutexLock lock(&mu_);
  ObjectPtr& slot = items_[key];
  ObjectPtr old = std::move(slot);
  slot = object;
  IndexLocked(key, old, object);
  return old;
}

ObjectPtr Indexer::Remove(const std::string& key) {
  absl::MutexLock lock(&mu_);
  auto it = items_.find(key);
  if (it == items_.end()) return nullptr;
  ObjectPtr old = std::move(it->second);
  items_.erase(it);
  IndexLocked(key, old, nullptr);
  return old;
}

Indexer::ReplaceResult Indexer::Replace(std::vector<ObjectPtr> objects) {
  ReplaceResult result;
  std::map<std::string, ObjectPtr> next;
  for (ObjectPtr& object : objects) {
    std::string key = Key(*object);
    next.insert_or_assign(std::move(key), std::move(object));
  }
  absl::MutexLock lock(&mu_);
  for (auto& [key, old] : items_) {
    if (!next.contains(key)) {
      IndexLocked(key, old, nullptr);
      result.deleted.push_back(old);
    }
  }
  for (const auto& [key, object] : next) {
    auto it = items_.find(key);
    if (it == items_.end()) {
      IndexLocked(key, nullptr, object);
      result.added.push_back(object);
    } else {
      IndexLocked(key, it->second, object);
      result.updated.emplace_back(it->second, object);
    }
  }
  items_ = std::move(next);
  return result;
}

ObjectPtr Indexer::Get(const std::string& key) const {
  absl::MutexLock lock(&mu_);
  auto it = items_.find(key);
  return it == items_.end() ? nullptr : it->second;
}

std::vector<ObjectPtr> Indexer::List() const {
  absl::MutexLock lock(&mu_);
  std::vector<ObjectPtr> out;
  out.reserve(items_.size());
  for (const auto& [key, object] : items_) out.push_back(object);
  return out;
}

std::vector<std::string> Indexer::ListKeys() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> out;
  out.reserve(items_.size());
  for (const auto& [key, object] : items_) out.push_back(key);
  return out;
}

size_t Indexer::Size() const {
  absl::MutexLock lock(&mu_);
  return items_.size();
}

absl::StatusOr<std::vector<ObjectPtr>> Indexer::ByIndex(const std::string& index_name,
                                                        const std::string& value) const {
  absl::MutexLock lock(&mu_);
  if (!indexers_.contains(index_name)) {
    return absl::InvalidArgumentError(absl::StrCat("no index named \"", index_name, "\""));
  }
  std::vector<ObjectPtr> out;
  auto index = indexes_.find(index_name);
  if (index == indexes_.end()) return out;
  auto keys = index->second.find(value);
  if (keys == index->second.end()) return out;
  out.reserve(keys->second.size());
  for (const std::string& key : keys->second) {
    auto it = items_.find(key);
    if (it != items_.end()) out.push_back(it->second);
  }
  return out;
}

absl::StatusOr<std::vector<std::string>> Indexer::IndexValues(const std::string& index_name) const {
  absl::MutexLock lock(&mu_);
  if (!indexers_.contains(index_name)) {
    return absl::InvalidArgumentError(absl::StrCat("no index named \"", index_name, "\""));
  }
  std::vector<std::string> out;
  auto index = indexes_.find(index_name);
  if (index == indexes_.end()) return out;
  for (const auto& [value, keys] : index->second) out.push_back(value);
  return out;
}

}  // namespace nereid::kube
