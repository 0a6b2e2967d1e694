#pragma once

// EdgeNodeWriter: keeps one EdgeNode object per node (common/api/edge_node.h) true to what the
// leader's edge hub knows, for `kubectl get en` (a NodeListener of the hub).
//
//  - The object is created when the node's LC first connects, owned by the node's Node (so the
//    garbage collector removes it with the Node; a node without a Node object gets one without an
//    owner). After the Node is deleted it is not re-created for that stream.
//  - Its status is written only when it changed and coalesced per node: a node waits in the
//    queue at most once, and when its turn comes the writer writes its latest state (whatever
//    happened meanwhile) if that differs from the last one written. There are no periodic writes.
//    One writer thread, through the GM's Kubernetes client (and its rate limiter).
//  - Events on transitions the writer wrote: Connected, Disconnected, Reconnected.
//  - Start() lists the EdgeNodes that exist (a previous leader's), so a reconnect storm costs one
//    status write per node; those shown as connected whose LC does not reach this replica within
//    `adopt_grace` are written disconnected.
//
// Leader only: the daemon starts it with the leader's work. Callbacks before Start() are kept and
// written once it runs. Thread-safe.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/kube/client.h"
#include "common/kube/event_recorder.h"
#include "common/time/clock.h"
#include "globalmanager/edgehub/node_listener.h"
#include "globalmanager/fleet/node_record.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/registry.h"

namespace nereid::gm {

class EdgeNodeWriter final : public NodeListener {
 public:
  struct Options {
    kube::KubeClient* client = nullptr;
    kube::EventRecorder* events = nullptr;  // null: no Events
    StatusSettings status;
    absl::Duration adopt_grace = absl::Minutes(2);
    // After a failed write the writer pauses this long, doubling up to max_backoff (the API server
    // is down or refusing: every node would fail alike).
    absl::Duration initial_backoff = absl::Milliseconds(500);
    absl::Duration max_backoff = absl::Seconds(30);
    Clock* clock = Clock::Real();
    std::shared_ptr<prometheus::Registry> registry;  // null: a private one
  };

  explicit EdgeNodeWriter(Options options);
  ~EdgeNodeWriter() override;
  EdgeNodeWriter(const EdgeNodeWriter&) = delete;
  EdgeNodeWriter& operator=(const EdgeNodeWriter&) = delete;

  // Lists the EdgeNodes that exist and starts writing. When the API server does not serve
  // edgenodes.sedna.io (its CRD is not installed), logs it and writes nothing: the fleet view is
  // optional, the GM works without it.
  absl::Status Start();
  // Joins the writer thread; what is queued stays unwritten (the next leader writes it).
  void Stop();

  // Nodes waiting for a write.
  std::size_t queued() const;

  void OnNodeConnected(const NodeConnection& connection) override;
  void OnNodeDisconnected(std::string_view node, uint64_t stream, absl::Time at) override;
  void OnNodeSummary(std::string_view node, uint64_t stream,
                     const edge::v1::NodeSummary& summary) override;

 private:
  struct Entry {
    NodeRecord record;
    std::string uid;            // the EdgeNode's, once known ("" before)
    bool owned_by_node = false;  // its owner is the Node: gone means the Node was deleted
    bool gone = false;           // deleted with its Node: not re-created for this stream
    bool queued = false;
    bool written = false;  // this replica wrote a status (listing one from another does not count)
    std::size_t fingerprint = 0;
    bool written_connected = false;
    absl::Time written_since = absl::InfinitePast();
  };
  // What one write needs, taken under the lock.
  struct Snapshot {
    std::string node;
    NodeRecord record;
    std::string uid;
    bool written = false;
    std::size_t fingerprint = 0;
  };

  void Run();
  void EnqueueLocked(const std::string& node, Entry& entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Writes `node`'s status if it changed. An error leaves it to be retried after a pause.
  absl::Status Write(const std::string& node);
  // The EdgeNode's uid: read, or created (owned by the Node when there is one). `owned_by_node`:
  // in, whether an earlier object of the node was the Node's (then a missing Node is NotFound:
  // the node was deleted); out, whether this one is.
  absl::StatusOr<std::string> EnsureObject(const std::string& node, bool* owned_by_node);
  // The Events for what a write of `status` shows that the last one did not.
  void RecordTransition(const Snapshot& snapshot, const Entry& before, const std::string& uid);
  // Lists the EdgeNodes that exist; those shown connected are remembered in adopted_.
  absl::Status Adopt();
  // Writes disconnected the adopted nodes (name -> listed status) that did not connect within the
  // grace.
  void EndAdoptedConnections(absl::flat_hash_map<std::string, kube::Json> adopted);

  const Options options_;
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& writes_;
  prometheus::Counter& written_;
  prometheus::Counter& unchanged_;
  prometheus::Counter& failed_;
  prometheus::Gauge& queue_depth_;

  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);
  std::deque<std::string> queue_ ABSL_GUARDED_BY(mu_);
  // Listed as connected at Start (their statuses as listed), until the grace ends.
  absl::flat_hash_map<std::string, kube::Json> adopted_ ABSL_GUARDED_BY(mu_);
  absl::Time adopt_deadline_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
  absl::Time started_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  bool disabled_ ABSL_GUARDED_BY(mu_) = false;  // edgenodes.sedna.io is not served
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace nereid::gm
