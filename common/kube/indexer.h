#pragma once

// Indexer: the informer's thread-safe cache (client-go tools/cache thread_safe_store.go +
// index.go). It maps keys ("namespace/name") to immutable shared objects and maintains named
// secondary indexes, each computed by an IndexFunc from an object to the index values it is filed
// under. Objects are ObjectPtr (shared_ptr<const Json>): readers keep what they got even after the
// cache moves on, and nobody modifies a cached object in place. A cache of many objects that are
// read one at a time may hold them packed (CacheEncoding::kCompact, packed_object.h).

#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/kube/object.h"
#include "common/kube/packed_object.h"

namespace nereid::kube {

// The values an object is filed under in one index (none: not indexed).
using IndexFunc = std::function<std::vector<std::string>(const Json& object)>;
using Indexers = std::map<std::string, IndexFunc>;

// How the cache holds its objects. kDecoded: the parsed JSON tree, each read is a pointer copy.
// kCompact: MessagePack bytes, a quarter to a seventh of the memory (informer_cache_bench); each
// read decodes unless a reader still holds the object, and an update or a delete decodes the old
// object to hand it to the handlers.
enum class CacheEncoding { kDecoded, kCompact };

// Built-in index names.
inline constexpr char kNamespaceIndex[] = "namespace";
inline constexpr char kControllerUidIndex[] = "controller-uid";

// metadata.namespace (cluster-scoped objects are not indexed).
std::vector<std::string> NamespaceIndexFunc(const Json& object);
// The uid of the ownerReference with controller=true, e.g. the job that owns a pod.
std::vector<std::string> ControllerUidIndexFunc(const Json& object);
// The string at a dotted path, e.g. FieldIndexFunc("spec.nodeName"); empty values not indexed.
IndexFunc FieldIndexFunc(std::string dotted_path);
// kNamespaceIndex and kControllerUidIndex.
Indexers DefaultIndexers();

class Indexer {
 public:
  // What a Replace changed, for delivering notifications.
  struct ReplaceResult {
    std::vector<ObjectPtr> added;
    std::vector<std::pair<ObjectPtr, ObjectPtr>> updated;  // (old, new), unchanged ones included
    std::vector<ObjectPtr> deleted;                        // last known state
  };

  explicit Indexer(Indexers indexers = DefaultIndexers(),
                   CacheEncoding encoding = CacheEncoding::kDecoded);
  Indexer(const Indexer&) = delete;
  Indexer& operator=(const Indexer&) = delete;

  // Adds indexes; existing objects are indexed at once. A name already in use is an error.
  absl::Status AddIndexers(Indexers indexers);

  // Inserts or replaces the object under Key(*object); returns the previous one (or nullptr).
  ObjectPtr Upsert(ObjectPtr object);
  // Removes `key`; returns what was stored (or nullptr).
  ObjectPtr Remove(const std::string& key);
  // Makes the contents exactly `objects` (a relist) and reports what changed.
  ReplaceResult Replace(std::vector<ObjectPtr> objects);

  ObjectPtr Get(const std::string& key) const;  // nullptr if absent
  bool Contains(const std::string& key) const;  // without decoding a packed object
  std::vector<ObjectPtr> List() const;          // in key order
  std::vector<std::string> ListKeys() const;
  size_t Size() const;
  CacheEncoding encoding() const { return encoding_; }
  // Objects filed under `value` in index `index_name`; an unknown index is InvalidArgument.
  absl::StatusOr<std::vector<ObjectPtr>> ByIndex(const std::string& index_name,
                                                 const std::string& value) const;
  // The values currently present in an index (e.g. every namespace that has objects).
  absl::StatusOr<std::vector<std::string>> IndexValues(const std::string& index_name) const;

 private:
  using Index = std::map<std::string, std::set<std::string>>;  // value → keys

  // One cached object in one of the two forms (both null: none).
  struct Entry {
    ObjectPtr decoded;
    std::shared_ptr<const PackedObject> packed;
    ObjectPtr Object() const { return packed ? packed->Unpack() : decoded; }
  };
  Entry MakeEntry(const ObjectPtr& object) const;
  static std::vector<ObjectPtr> Objects(const std::vector<Entry>& entries);

  // Runs a (possibly user-supplied) index function; a throwing function indexes nothing.
  static std::vector<std::string> Evaluate(const std::string& index_name, const IndexFunc& func,
                                           const Json& object);
  void IndexLocked(const std::string& key, const ObjectPtr& old_object, const ObjectPtr& new_object)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const CacheEncoding encoding_;
  mutable absl::Mutex mu_;
  std::map<std::string, Entry> items_ ABSL_GUARDED_BY(mu_);
  Indexers indexers_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, Index> indexes_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nereid::kube
