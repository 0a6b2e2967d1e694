#pragma once

// WorkerPlacements: which edge nodes hold which workers of a multi-edge service, announced to the
// nodes' LocalControllers as Worker resources (ref {Worker, namespace, worker name, service uid},
// WorkerSpec {job kind, job name, worker type, node}). Sync makes exactly the given workers held
// (a node is sent a worker again only when the service's version or uid changed) and tells nodes
// to drop what is no longer listed; Forget drops everything of a service. Thread-safe; the
// dispatcher is called under the lock (it never blocks on a stream). With an OwnerSpecFn the
// service itself is announced to the same nodes.

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
  // Whether `node` holds a worker of `key` sent for this uid ("" = any).
  bool Holds(const std::string& key, std::string_view node, std::string_view uid) const;

 private:
  struct Placed {
    std::string ns;
    std::string uid;
    std::string version;
    std::map<std::string, std::set<std::string>> workers;  // node → worker names
  };

  // The service `key` itself, as sent for `uid`.
  edge::v1::ObjectRef OwnerRef(const std::string& key, const std::string& uid) const;

  EdgeDispatcher* const edge_;
  const std::string job_kind_;
  const OwnerSpecFn owner_spec_;
  mutable absl::Mutex mu_;
  std::map<std::string, Placed> placed_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nereid::gm
