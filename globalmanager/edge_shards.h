#pragma once

// Edge streams sharded over the GM replicas (docs/scaling.md §3, "Ownership" and "Handover"):
//
//  - Every replica holds a Lease of its own, `<group>-edge-<identity>` in the leader Lease's
//    namespace, labelled nereid.io/edge-shard=<group> (the group is the leader Lease's name), with
//    the address where nodes reach its edge hub in the annotation nereid.io/edge-address. It is
//    renewed and released like the leader Lease (kube::LeaderElector on a Lease no one else wants).
//  - The live replicas are this one and those whose Lease has a holder, an address, and changed
//    within its leaseDurationSeconds as seen on this replica's clock (a watch of the labelled
//    Leases; no remote timestamp is compared with the local clock).
//  - A node belongs to the live replica that wins rendezvous hashing of (node, identity)
//    (edgehub/rendezvous.h). The hub and the relay send a node another replica owns to that
//    replica's address (OwnerElsewhere); a replica serves the nodes it owns, directly when it
//    leads and through the relay otherwise.
//  - Once a second, the streams of nodes owned elsewhere now (a replica joined) are ended with the
//    owner's address, at most moves_per_second of them, so a join never becomes a reconnect storm.
//    A replica that leaves releases its Lease: its nodes redial and land on their new owners.
//    After a burst of moves the freed connection memory is returned to the kernel (malloc_trim).
//  - A node whose owner did not serve it says so (net::kUnservedOwnerMetadata); the hub and the
//    relay then serve it wherever it lands and never move it back there (edge_hub.h).
//  - Leases released, or unchanged for collect_after (a replica that died), are deleted, each
//    with its resourceVersion as a precondition so a renewal that wins the race keeps it.
//
// When in doubt, serve: before Start, while the watch is broken (other Leases then look expired),
// or with no other live replica, every node is this replica's.
//
// Thread-safe.

#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/kube/client.h"
#include "common/kube/leader_election.h"
#include "common/kube/reflector.h"
#include "common/time/clock.h"
#include "globalmanager/edgehub/edge_hub.h"
#include "globalmanager/edgehub/edge_relay.h"
#include "globalmanager/edgehub/node_ownership.h"
#include "prometheus/counter.h"
#include "prometheus/gauge.h"
#include "prometheus/registry.h"

namespace nereid::gm {

// On a Lease: where the holder's edge hub takes nodes directly (the leader Lease, so the other
// replicas send or relay nodes there; a replica's edge shard Lease, for the nodes it owns).
inline constexpr char kEdgeAddressAnnotation[] = "nereid.io/edge-address";

class EdgeShards final : public NodeOwnership, private kube::ReflectorStore {
 public:
  struct Options {
    kube::KubeClient* client = nullptr;
    std::string group;  // the leader Lease's name
    // This replica's shard Lease is held as the leader Lease is: the namespace, identity and
    // timings from here; its name, labels and annotation are the shards' own.
    kube::LeaderElectionConfig lease;
    int moves_per_second = 100;
    absl::Duration sweep_period = absl::Seconds(1);
    absl::Duration collect_after = absl::Minutes(2);
    Clock* clock = Clock::Real();
    std::shared_ptr<prometheus::Registry> registry;  // null: a private one
  };

  // Checks the options (the Lease name this replica would hold must be a valid object name).
  static absl::StatusOr<std::unique_ptr<EdgeShards>> Create(Options options);
  ~EdgeShards() override;
  EdgeShards(const EdgeShards&) = delete;
  EdgeShards& operator=(const EdgeShards&) = delete;

  // Takes this replica's Lease with `address` (HOST:PORT where nodes reach its edge hub), watches
  // the others' and moves nodes: `hub` and `relay` (either may be null) hold the streams this
  // replica serves. Only the first call does anything.
  void Start(std::string address, EdgeHub* hub, EdgeRelay* relay);
  // Stops moving nodes and releases the Lease, so the others take this replica's nodes at once.
  void Stop();

  std::string OwnerElsewhere(std::string_view node) const override;
  // The identities of the live replicas, this one included once started; sorted.
  std::vector<std::string> Replicas() const;
  // Whether the watch of the shard Leases has listed them once.
  bool WatchSynced() const;
  // The name of the Lease this replica holds.
  const std::string& lease_name() const { return lease_name_; }

 private:
  struct Peer {
    std::string identity;  // the holder; "" once released
    std::string address;
    std::string resource_version;
    std::string record;  // holder and renewTime: what changes when the Lease is renewed
    absl::Duration duration;
    // When `record` last changed, on our clock; a Lease first seen counts as changed a duration
    // ago (expired until it changes: a Lease found at start may be a dead replica's).
    absl::Time changed;
  };

  // The live replicas at one moment, sorted by identity: owners are computed from it unlocked.
  struct LiveSet {
    std::string self;
    std::vector<std::string> identities;
    std::vector<std::string> addresses;  // of identities[i]
    // The owner's address when it is not `self` (and there is more than one replica), else "".
    std::string OwnerElsewhere(std::string_view node) const;
  };

  EdgeShards(Options options, std::string lease_name);

  // kube::ReflectorStore: the labelled Leases, from the reflector's thread.
  void Replace(std::vector<kube::ObjectPtr> objects, const std::string& resource_version) override;
  void Add(kube::ObjectPtr object) override;
  void Update(kube::ObjectPtr object) override;
  void Delete(kube::ObjectPtr object) override;
  void ObserveLocked(const kube::Json& lease, absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  LiveSet LiveLocked(absl::Time now) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  LiveSet Live() const;

  void Run();
  // Moves up to the budget of nodes owned elsewhere; returns how many it moved.
  int MoveNodes(int budget);
  void CollectLeases();

  const Options options_;
  const std::string lease_name_;
  Clock* const clock_;
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Counter* moved_;
  prometheus::Counter* collected_;
  prometheus::Gauge* replicas_;

  // Start and Stop may run on different threads (the elector's, the daemon's): they hold this for
  // their whole run, so the members below are set and torn down one call at a time.
  mutable absl::Mutex lifecycle_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  std::unique_ptr<kube::LeaderElector> lease_ ABSL_GUARDED_BY(lifecycle_mu_);
  std::unique_ptr<kube::Reflector> watch_ ABSL_GUARDED_BY(lifecycle_mu_);
  std::thread thread_ ABSL_GUARDED_BY(lifecycle_mu_);
  EdgeHub* hub_ = nullptr;      // set by Start, before the thread
  EdgeRelay* relay_ = nullptr;  // set by Start, before the thread

  mutable absl::Mutex mu_;
  std::string address_ ABSL_GUARDED_BY(mu_);  // where nodes reach this replica, from Start
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  absl::flat_hash_map<std::string, Peer> peers_ ABSL_GUARDED_BY(mu_);  // by Lease name
};

}  // namespace nereid::gm
