#pragma once

// EdgePlacements: which edge nodes hold which object, for a controller that announces objects to
// nodes through the EdgeDispatcher. One record per object key: its ref (with uid) and, per node,
// the version that node was sent.
//
//   placements_.Sync(key, {{"edge-0", r0}, {"edge-1", r1}});  // exactly these nodes
//   placements_.Sync(key, resource, {"edge-0", "edge-1"});   // the same resource on each
//   placements_.Forget(key);                                 // deleted: off every node
//
// Sync sends a node its resource only when the version it holds differs or the object was
// re-created (another uid), and tells every node no longer listed to drop the object; the hub
// resends nothing for an unchanged version, so calling Sync on every reconcile is cheap. What a
// node was sent is kept as the hub's own copy (one shared, immutable Resource per version, however
// many nodes hold it), not as a second copy of its ref and version: with 100,000 objects the
// per-object bookkeeping is memory the GM holds for as long as they exist. A
// dispatcher error does not stop the other nodes: the record keeps what each node was really sent
// (a failed Remove leaves the node listed, so the next Sync retries it) and the first error is
// returned. Thread-safe; the dispatcher is called under the lock (it never blocks on a stream).
// Each send and removal is logged at DEBUG only: one INFO line per object and node made every
// reconcile worker wait for the log's reader in a burst of creates (bench/RESULTS.md "Where
// create->ACK goes"); the controllers' Events and the hub's metrics say what reached the nodes.

#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/btree_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "globalmanager/controllers/edge_dispatcher.h"
#include "nereid/edge/v1/resources.pb.h"

namespace nereid::gm {

// What one Sync or Forget changed (for a controller's own logs and Events).
struct EdgeChange {
  std::vector<std::string> added;    // Nodes that did not hold the object before.
  std::vector<std::string> updated;  // Nodes sent a new version.
  std::vector<std::string> removed;  // Nodes told to drop it.
};

class EdgePlacements {
 public:
  // `what` names the kind in logs ("dataset", "federatedlearningjob").
  EdgePlacements(EdgeDispatcher* edge, std::string what);

  // Makes exactly the nodes of `resources` hold `key`, each with its resource (whose ref names
  // the object). An empty map is Forget.
  absl::Status Sync(const std::string& key,
                    const std::map<std::string, edge::v1::Resource>& resources,
                    EdgeChange* change = nullptr);
  // The same `resource` on each of `nodes`.
  absl::Status Sync(const std::string& key, const edge::v1::Resource& resource,
                    const std::set<std::string>& nodes, EdgeChange* change = nullptr);
  // Every node drops `key`.
  absl::Status Forget(const std::string& key, EdgeChange* change = nullptr);

  // The nodes holding `key`.
  std::set<std::string> Nodes(const std::string& key) const;
  bool Holds(const std::string& key, std::string_view node) const;
  // The uid of the object `key` was last synced as ("" when it is on no node).
  std::string Uid(const std::string& key) const;
  // How many objects are on at least one node.
  size_t size() const;

 private:
  using SharedResource = std::shared_ptr<const edge::v1::Resource>;
  struct Sent {
    std::string node;
    SharedResource resource;  // As the node was sent it (the hub holds the same object).
  };
  struct Placed {
    std::string uid;                    // Of the last Sync.
    absl::InlinedVector<Sent, 1> sent;  // Sorted by node; most objects are on one node.
  };

  // The node's entry in `placed.sent`, or null.
  static const Sent* Find(const Placed& placed, std::string_view node);
  // Records that `node` now holds `resource`, keeping `placed.sent` sorted.
  static void Record(Placed& placed, const std::string& node, SharedResource resource);

  // Tells every node of `placed` that `keep` rejects to drop the object.
  absl::Status RemoveLocked(const std::string& key, Placed& placed,
                            absl::FunctionRef<bool(const std::string& node)> keep,
                            EdgeChange* change) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Sends `resource` to `node` unless it holds that version of that uid already.
  absl::Status SendLocked(const std::string& key, Placed& placed, const std::string& node,
                          const edge::v1::Resource& resource, SharedResource& shared,
                          EdgeChange* change) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  EdgeDispatcher* const edge_;
  const std::string what_;
  mutable absl::Mutex mu_;
  absl::btree_map<std::string, Placed> placed_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nereid::gm
