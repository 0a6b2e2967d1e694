#pragma once

// Lister: read access to an informer's cache (client-go generated listers). Everything it returns
// is shared and immutable: copy an object before changing it ("NEVER modify objects from the
// store" — sample-controller). Cheap to copy; valid as long as the informer that made it.

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/kube/indexer.h"
#include "common/kube/object.h"
#include "common/kube/resource.h"
#include "common/kube/selector.h"

namespace nereid::kube {

class Lister {
 public:
  Lister(const Indexer* indexer, Resource resource);

  // NotFound (as the API server words it) when the cache has no such object.
  absl::StatusOr<ObjectPtr> Get(std::string_view ns, std::string_view name) const;
  absl::StatusOr<ObjectPtr> GetByKey(const std::string& key) const;
  // Every cached object whose labels match (the empty selector matches all).
  std::vector<ObjectPtr> List(const LabelSelector& selector = {}) const;
  // Every cached object's key: no object is read (a packed cache decodes none).
  std::vector<std::string> ListKeys() const { return indexer_->ListKeys(); }
  // Objects of one namespace, through the namespace index.
  std::vector<ObjectPtr> List(std::string_view ns, const LabelSelector& selector = {}) const;
  absl::StatusOr<std::vector<ObjectPtr>> ByIndex(const std::string& index_name,
                                                 const std::string& value) const;

 private:
  const Indexer* indexer_;
  Resource resource_;
};

}  // namespace nereid::kube
