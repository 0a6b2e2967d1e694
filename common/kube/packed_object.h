#pragma once

// PackedObject: one cached object held as MessagePack bytes instead of a parsed JSON tree.
// nlohmann's tree costs about 7x the object's JSON text (a std::map node and a std::string per
// member); MessagePack is smaller than the text. A 426-byte Dataset takes 3,024 bytes cached as a
// tree and 768 packed, the cache's entry included (informer_cache_bench). Reading decodes, and the
// decoded copy is shared for as long as any reader holds it, so readers of one object at the same
// time get the same pointer, as they do from a cache of decoded objects. Thread-safe.

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/kube/object.h"

namespace nereid::kube {

class PackedObject {
 public:
  // Packs `object`, which also becomes the shared decoded copy while its holders keep it.
  explicit PackedObject(const ObjectPtr& object);
  PackedObject(const PackedObject&) = delete;
  PackedObject& operator=(const PackedObject&) = delete;

  // The object: the copy a reader still holds, or a fresh decode.
  ObjectPtr Unpack() const;
  size_t packed_size() const { return bytes_.size(); }

 private:
  const std::vector<uint8_t> bytes_;
  mutable absl::Mutex mu_;
  mutable std::weak_ptr<const Json> decoded_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nereid::kube
