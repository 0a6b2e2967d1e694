#pragma once

// The object store behind devapiserver, with the API server's write semantics:
//   - one global resourceVersion counter; uid, creationTimestamp, generation (bumped when anything
//     but metadata/status changes, and when deletion starts), generateName;
//   - optimistic concurrency: a stale metadata.resourceVersion on update → 409 Conflict; updates
//     without one are allowed only where upstream allows them (most built-ins; not leases,
//     CRs or CRDs);
//   - the status subresource changes only .status; the main resource keeps .status for types
//     with a status subresource;
//   - finalizers and deletionTimestamp; delete preconditions; propagationPolicy Orphan |
//     Background (default) | Foreground; ownerReference garbage collection (run synchronously
//     inside the write, so tests see its effects without waiting); namespace deletion
//     (Terminating, contents deleted, then the namespace);
//   - CRDs: creating one registers its resource in the Registry at once; CRs are pruned, defaulted
//     and validated against the CRD schema; deleting the CRD removes its objects;
//   - list with label/field selectors and limit/continue paging over a consistent snapshot
//     (rebuilt from watch history; 410 Expired once that history is gone);
//   - watch from a resourceVersion (410 Expired when older than the kept history).
// Every write is persisted (if a Persistence is given) before it becomes visible.
// storage.cc holds CRUD and watch; admission.cc what a write passes through before it is stored;
// list_paging.cc selectors and List; garbage_collection.cc deletion beyond a plain removal.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/random/random.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/kube/object.h"
#include "common/kube/selector.h"
#include "common/time/clock.h"
#include "tools/devapiserver/persistence.h"
#include "tools/devapiserver/registry.h"
#include "tools/devapiserver/watch.h"

namespace nereid::devapi {

struct StoreOptions {
  Clock* clock = Clock::Real();
  size_t history_size = 10000;       // watch events kept for resuming; older → 410
  size_t max_watch_queue = 100000;   // per watcher; a reader further behind is disconnected
  Persistence* persistence = nullptr;  // not owned; null → in memory only
};

struct WriteOptions {
  bool dry_run = false;
  // fieldValidation: "Strict" (unknown fields → 400), "Warn" (pruned, warning), "Ignore".
  std::string field_validation = "Warn";
  std::vector<std::string>* warnings = nullptr;  // where Warn-level messages go
};

struct ListRequest {
  std::string ns;  // empty: all namespaces (or cluster-scoped)
  std::string label_selector;
  std::string field_selector;
  int64_t limit = 0;
  std::string continue_token;
  std::string resource_version;
  std::string resource_version_match;  // "", "NotOlderThan", "Exact"
};

struct ListResult {
  std::vector<Json> items;
  int64_t resource_version = 0;
  std::string continue_token;
  std::optional<int64_t> remaining_item_count;
};

struct DeleteRequest {
  std::optional<std::string> propagation_policy;  // Orphan | Background | Foreground
  std::optional<std::string> precondition_uid;
  std::optional<std::string> precondition_resource_version;
  bool dry_run = false;
};

struct DeleteResult {
  Json object;           // the last state
  bool pending = false;  // still present (finalizers, foreground deletion)
};

// Mutates a copy of the current object (PATCH); runs under the store lock, must not block.
using MutateFn = std::function<absl::StatusOr<Json>(const Json& current)>;

// The key an object is stored under: "ns/name" for namespaced resources, "name" otherwise.
std::string ObjectKey(const ResourceType& type, std::string_view ns, std::string_view name);

class Store {
 public:
  Store(Registry* registry, StoreOptions options);
  ~Store();

  // Loads persisted state (registering persisted CRDs) and creates the default namespaces.
  absl::Status Start();

  absl::StatusOr<Json> Get(const ResourceType& type, std::string_view ns, std::string_view name);
  absl::StatusOr<ListResult> List(const ResourceType& type, const ListRequest& request);
  absl::StatusOr<Json> Create(const ResourceType& type, std::string_view ns, Json object,
                              const WriteOptions& options = {});
  // PUT: `subresource` is "" or "status".
  absl::StatusOr<Json> Update(const ResourceType& type, std::string_view ns, std::string_view name,
                              Json object, std::string_view subresource = "",
                              const WriteOptions& options = {});
  // PATCH: `mutate` turns the current object into the desired one; a resourceVersion in the
  // result that differs from the current one is a precondition (409), none means unconditional.
  absl::StatusOr<Json> Patch(const ResourceType& type, std::string_view ns, std::string_view name,
                             const MutateFn& mutate, std::string_view subresource = "",
                             const WriteOptions& options = {});
  absl::StatusOr<DeleteResult> Delete(const ResourceType& type, std::string_view ns,
                                      std::string_view name, const DeleteRequest& request = {});
  // A watcher positioned per request.resource_version ("" or "0": current state as ADDED first).
  absl::StatusOr<std::shared_ptr<Watcher>> Watch(const ResourceType& type,
                                                 const ListRequest& request,
                                                 std::string api_version);

  int64_t CurrentVersion() const;
  size_t WatcherCount() const;
  // Ends every watch (server shutdown).
  void Shutdown();
  // Every open watch ends with a 410 ERROR event and no version issued so far can be resumed
  // from (as after an etcd compaction): clients relist. A fault injected on request.
  void ExpireWatches();
  Registry& registry() { return *registry_; }
  Clock* clock() const { return options_.clock; }

 private:
  using Collection = std::map<std::string, ObjectPtr>;  // by "ns/name" or "name"
  struct Location {
    std::string storage_key;
    std::string key;
  };

  std::string NewUid() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  ObjectPtr FindLocked(const std::string& storage_key, const std::string& key) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status CheckNamespaceLocked(const ResourceType& type, std::string_view ns) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Writes `object` as the new state (ADDED or MODIFIED): assigns the next resourceVersion,
  // persists, stores and publishes. Returns the stored object.
  absl::StatusOr<ObjectPtr> CommitLocked(const ResourceType& type, const std::string& key,
                                         Json object) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Removes the object for good (DELETED) and runs what follows a removal: garbage collection of
  // dependents, foreground owners, namespace finalization, CRD cleanup.
  absl::StatusOr<Json> RemoveLocked(const ResourceType& type, const std::string& key,
                                    Json last_state) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<DeleteResult> DeleteLocked(const ResourceType& type, const std::string& key,
                                            const DeleteRequest& request)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<Json> UpdateLocked(const ResourceType& type, const std::string& key, Json object,
                                    std::string_view subresource, bool unconditional,
                                    const WriteOptions& options) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Garbage collection and deletion beyond a plain removal (garbage_collection.cc).
  std::vector<Location> DependentsLocked(const std::string& uid) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void AfterRemovalLocked(const ResourceType& type, const Json& removed)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void TryFinishForegroundLocked(const std::string& uid) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void TryFinalizeNamespaceLocked(const std::string& ns) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Marks the namespace Terminating, deletes its contents, and removes it once empty.
  absl::StatusOr<DeleteResult> DeleteNamespaceLocked(const ResourceType& type,
                                                     const std::string& key, Json marked)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // propagationPolicy=Orphan: the dependents lose their reference to `uid`.
  absl::Status OrphanDependentsLocked(const std::string& uid) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // propagationPolicy=Foreground with dependents: the owner (`marked`, deletion started) keeps the
  // foregroundDeletion finalizer until its blocking dependents are gone.
  absl::StatusOr<DeleteResult> DeleteForegroundLocked(const ResourceType& type,
                                                      const std::string& key, Json marked,
                                                      const Json& last_state,
                                                      const std::vector<Location>& dependents)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A dependent created when all its owners are already gone is deleted right away (Background).
  void CollectIfOwnersGoneLocked(const ResourceType& type, const std::string& key,
                                 const Json& created) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  ResourceTypePtr TypeOf(const std::string& storage_key) const;

  Registry* registry_;
  StoreOptions options_;

  mutable absl::Mutex mu_;
  std::map<std::string, Collection> collections_ ABSL_GUARDED_BY(mu_);  // by storage key
  std::map<std::string, Location> uids_ ABSL_GUARDED_BY(mu_);
  int64_t version_ ABSL_GUARDED_BY(mu_) = 0;
  WatchHub hub_ ABSL_GUARDED_BY(mu_);
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  absl::BitGen rng_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nereid::devapi
