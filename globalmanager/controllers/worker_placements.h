#pragma once

// WorkerPlacements: the workers of a multi-edge service announced to their nodes' LocalControllers
// as Worker resources (ref {Worker, namespace, worker name, service uid}, WorkerSpec {job kind,
// job name, worker type, node}), and with an OwnerSpecFn the service itself to the same nodes.
// What each node holds is kept by EdgePlacements (edge_placements.h), one record per worker and
// one for the service: this class only builds those resources and remembers which workers a
// service has, so that Sync drops the ones no longer listed and Forget drops them all. A node is
// sent a worker again only when the service's version or uid changed. Thread-safe.

#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "common/kube/object.h"
#include "globalmanager/controllers/edge_dispatcher.h"
#include "globalmanager/controllers/edge_placements.h"
#include "globalmanager/controllers/multi_edge_workers.h"
#include "nereid/edge/v1/resources.pb.h"

namespace nereid::gm {

class WorkerPlacements {
 public:
  // Sets the spec of the resource that announces the service itself ({job kind, namespace, name,
  // uid}) to each node holding its workers, so that node's LC and the edge hub accept the
  // workers' reports about the service. Null: only the workers are announced.
  using OwnerSpecFn = std::function<void(std::string_view node, edge::v1::Resource* resource)>;

  WorkerPlacements(EdgeDispatcher* edge, std::string_view job_kind,
                   OwnerSpecFn owner_spec = nullptr);

  // `object` is the service (for its namespace, name, uid and version).
  absl::Status Sync(const std::string& key, const kube::Json& object,
                    const std::vector<EdgeWorker>& workers);
  absl::Status Forget(const std::string& key);

  // The nodes holding a worker of `key` (sorted).
  std::vector<std::string> Nodes(const std::string& key) const;

 private:
  // The EdgePlacements key of the worker `name` of the service `key`.
  static std::string WorkerKey(const std::string& key, const std::string& name);

  const std::string job_kind_;
  const OwnerSpecFn owner_spec_;
  EdgePlacements owners_;   // The services themselves (with an OwnerSpecFn), by service key.
  EdgePlacements workers_;  // Each worker, by WorkerKey.
  mutable absl::Mutex mu_;  // Serializes Sync/Forget of a service; guards names_.
  std::map<std::string, std::set<std::string>> names_ ABSL_GUARDED_BY(mu_);  // key → workers
};

}  // namespace nereid::gm
