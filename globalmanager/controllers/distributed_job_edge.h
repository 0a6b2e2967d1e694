#pragma once

// DistributedJobEdge: the DistributedJob's edge half: what the LCs of its nodes must
// know to take its workers' reports. The job controller
// (distributed_job_controller.h) hands it each job's placement after a reconcile; it announces the
// job to the LocalControllers of the job's edge nodes through the EdgeDispatcher, and it is the
// ReportSink for kind "DistributedJob", turning worker reports into status.workerReports.
//
// Downstream (JobPlacementSink, level-based, from the reconcile workers; never blocks):
//   nodes of a job = for each task whose pod template selects nodes (placement.h: spec.nodeName →
//                    that node; nodeSelector / required node affinity → the matching edge nodes)
//                    those nodes, while the job is not finished
//                  ∪ the node of every pod of the job that is bound (spec.nodeName) and not being
//                    deleted, when the task selects nodes or the node is an edge node (labelled
//                    node-role.kubernetes.io/edge) — a finished job stays on the nodes whose pods
//                    are kept (cleanPodPolicy), so late "completed" reports still arrive
//   each node      → Upsert(node, Resource{ref {DistributedJob, ns, name, uid}, DistributedJobSpec
//                    with only the tasks concerning that node and their pods bound there}); the
//                    version is metadata.generation (edge_objects.h) + a hash of that node's spec,
//                    so a node is sent the object again only when what concerns it changed
//   a node no longer in the set (template edited, pod moved or cleaned up) → Remove(node, ref)
//   the job deleted → Remove from every node it was announced to
// A template whose node selection is malformed (placement.h InvalidArgument) places that task on
// no node by its template (logged once per job generation); its bound pods still count.
//
// Upstream (ReportSink, on a report worker): a WorkerReport about {DistributedJob, ns, name}
// from worker W (the pod name "<job>-<task>-<index>", Sedna's WORKER_NAME env) becomes
//   status.workerReports[<task>] = {worker, node, kind, status, time, results | resultsTruncated}
// — the latest report per task, so the field is bounded by the number of tasks; results over
// max_results_bytes are dropped and resultsTruncated is set. Written with WriteStatus (that one
// entry replaced on the status read, conflict retries), so it never races the controller's own
// status fields (which it writes with job::PutJobStatusFields, leaving workerReports alone). A
// report identical to the entry already in the cache is accepted without a write.
// Outcomes: job gone or re-created (uid differs) → Rejected ObjectGone; worker not a pod name of
// one of the job's tasks → Rejected UnknownWorker; not a worker payload → Rejected Invalid; API
// errors → Retry ApiError (the LC resends).

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/kube/client.h"
#include "common/kube/lister.h"
#include "common/time/clock.h"
#include "globalmanager/controllers/distributed_job_controller.h"
#include "globalmanager/controllers/edge_dispatcher.h"
#include "globalmanager/controllers/edge_placements.h"
#include "globalmanager/controllers/report_router.h"
#include "nereid/edge/v1/resources.pb.h"

namespace nereid::gm {

class DistributedJobEdge final : public JobPlacementSink, public ReportSink {
 public:
  struct Options {
    EdgeDispatcher* edge = nullptr;      // required
    kube::KubeClient* client = nullptr;  // required (status writes)
    Clock* clock = Clock::Real();
    std::size_t max_results_bytes = 4096;
  };

  // `jobs`: the distributedjobs lister (reports are checked against the cached job); `nodes`: a
  // Node lister (template placement and the edge-node test). Both must outlive this object.
  DistributedJobEdge(Options options, kube::Lister jobs, kube::Lister nodes);

  // JobPlacementSink.
  void JobPlaced(const JobPlacementView& view) override;
  void JobRemoved(const std::string& kind, const std::string& key) override;

  // ReportSink ("DistributedJob").
  ReportOutcome HandleReport(std::string_view node, const edge::v1::StatusReport& report) override;

  // The nodes the job `key` ("ns/name") is announced to, sorted. For tests and diagnostics.
  std::vector<std::string> NodesOf(const std::string& key) const;

 private:
  bool IsEdgeNode(const std::string& node) const;
  // node → the spec announced there; `selection_error` gets the first malformed selection.
  std::map<std::string, edge::v1::DistributedJobSpec> NodeSpecs(const JobPlacementView& view,
                                                                std::string* selection_error) const;

  const Options options_;
  const kube::Lister jobs_;
  const kube::Lister nodes_;
  EdgePlacements announced_;
  absl::Mutex mu_;
  // job key → the generation whose malformed node selection was logged (once per generation).
  std::map<std::string, std::string> bad_selection_logged_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nereid::gm
