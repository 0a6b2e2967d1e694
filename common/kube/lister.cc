#include "common/kube/lister.h"

#include <utility>

#include "common/kube/errors.h"

namespace nereid::kube {

Lister::Lister(const Indexer* indexer, Resource resource)
    : indexer_(indexer), resource_(std::move(resource)) {}

absl::StatusOr<ObjectPtr> Lister::Get(std::string_view ns, std::string_view name) const {
  ObjectPtr object = indexer_->Get(MakeKey(resource_.namespaced ? ns : "", name));
  if (object == nullptr) return NotFoundError(resource_.QualifiedName(), name);
  return object;
}

absl::StatusOr<ObjectPtr> Lister::GetByKey(const std::string& key) const {
  ObjectPtr object = indexer_->Get(key);
  if (object == nullptr) return NotFoundError(resource_.QualifiedName(), key);
  return object;
}

std::vector<ObjectPtr> Lister::List(const LabelSelector& selector) const {
  std::vector<ObjectPtr> all = indexer_->List();
  if (selector.empty()) return all;
  std::vector<ObjectPtr> out;
  for (ObjectPtr& object : all) {
    if (selector.Matches(Labels(*object))) out.push_back(std::move(object));
  }
  return out;
}

std::vector<ObjectPtr> Lister::List(std::string_view ns, const LabelSelector& selector) const {
  if (ns.empty()) return List(selector);
  absl::StatusOr<std::vector<ObjectPtr>> in_ns =
      indexer_->ByIndex(kNamespaceIndex, std::string(ns));
  std::vector<ObjectPtr> candidates;
  if (in_ns.ok()) {
    candidates = *std::move(in_ns);
  } else {
    // No namespace index (a custom Indexers set without it): filter the whole cache.
    for (ObjectPtr& object : indexer_->List()) {
      if (Namespace(*object) == ns) candidates.push_back(std::move(object));
    }
  }
  if (selector.empty()) return candidates;
  std::vector<ObjectPtr> out;
  for (ObjectPtr& object : candidates) {
    if (selector.Matches(Labels(*object))) out.push_back(std::move(object));
  }
  return out;
}

absl::StatusOr<std::vector<ObjectPtr>> Lister::ByIndex(const std::string& index_name,
                                                       const std::string& value) const {
  return indexer_->ByIndex(index_name, value);
}

}  // namespace nereid::kube
