#include "globalmanager/controllers/distributed_job_wiring.h"

#include <utility>

#include "common/job/distributed_job.h"
#include "common/log/log.h"
#include "common/status/macros.h"
#include "globalmanager/controllers/distributed_job_controller.h"
#include "globalmanager/controllers/distributed_job_edge.h"
#include "globalmanager/controllers/informer_handlers.h"
#include "globalmanager/controllers/placement.h"
#include "globalmanager/controllers/registry.h"
#include "globalmanager/controllers/report_router.h"

namespace nereid::gm {
namespace {

DistributedJobEdge::Options EdgeOptions(const ControllerContext& context) {
  DistributedJobEdge::Options options;
  options.edge = context.edge;
  options.client = context.client;
  options.clock = context.clock;
  return options;
}

// DistributedJobRunner (the job engineer's: informers from the shared factory, child lister,
// expectations, gang availability, its own handlers) under the GmController lifecycle, with its
// edge half (DistributedJobEdge) when the daemon has an edge hub: the job announced to its nodes'
// LCs, worker reports routed to status.workerReports, the Node informer for template placement.
class DistributedJobGmController final : public GmController {
 public:
  explicit DistributedJobGmController(const ControllerContext& context)
      : nodes_(context.edge != nullptr ? context.informers->Informer(kube::resources::Nodes())
                                       : nullptr) {
    DistributedJobRunner::Options options;
    options.ns = context.settings.ns;
    options.workers = context.settings.workers;
    options.lc_server = context.settings.lc_server;
    if (nodes_ != nullptr) {
      edge_ = std::make_unique<DistributedJobEdge>(
          EdgeOptions(context),
          context.informers->Informer(job::DistributedJobs(), context.ScopedInformerOptions())
              ->GetLister(),
          nodes_->GetLister());
      options.placement = edge_.get();
    }
    runner_ = std::make_unique<DistributedJobRunner>(context.client, context.informers,
                                                     context.events, context.clock,
                                                     std::move(options));
    if (nodes_ != nullptr) {
      // An edge node's labels or taints decide which nodes a template selects: look at every job
      // again when an edge node comes, goes or changes them (not on status heartbeats; cloud nodes
      // are never selected by a template's selector).
      DistributedJobRunner* runner = runner_.get();
      auto enqueue_all = [runner] {
        for (const std::string& key : runner->jobs().ListKeys()) runner->Enqueue(key);
      };
      auto is_edge = [](const kube::ObjectPtr& node) {
        return node != nullptr && kube::Label(*node, kEdgeNodeRoleLabel).has_value();
      };
      nodes_->AddEventHandler(OnPlacementChange(enqueue_all, is_edge));
    }
  }
  ~DistributedJobGmController() override { runner_->Stop(); }

  // The sink the daemon registers with the ReportRouter (null without an edge hub).
  DistributedJobEdge* edge() { return edge_.get(); }

  const std::string& name() const override { return name_; }
  std::vector<kube::SharedInformer*> informers() const override {
    std::vector<kube::SharedInformer*> all = runner_->informers();
    if (nodes_ != nullptr) all.push_back(nodes_);
    return all;
  }
  absl::Status PrimeEdge() override {
    if (edge_ == nullptr) return absl::OkStatus();
    LOG(INFO) << "distributedjob controller: " << runner_->AnnounceAll()
              << " jobs looked at for the edge registry";
    return absl::OkStatus();
  }
  absl::Status Start() override { return runner_->Start(); }
  void Stop() override { runner_->Stop(); }

 private:
  const std::string name_ = "distributedjob";
  kube::SharedInformer* const nodes_;
  // Declared before the runner: its workers call the sink until the runner is stopped.
  std::unique_ptr<DistributedJobEdge> edge_;
  std::unique_ptr<DistributedJobRunner> runner_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<GmController>> MakeDistributedJobController(
    ControllerContext& context) {
  return CreateIfServed(context, job::DistributedJobs(),
                        [](const ControllerContext& context)
                            -> absl::StatusOr<std::unique_ptr<DistributedJobGmController>> {
                          auto controller = std::make_unique<DistributedJobGmController>(context);
                          if (controller->edge() != nullptr) {
                            RETURN_IF_ERROR(RegisterReportSink(context, job::kDistributedJobKind,
                                                               controller->edge()));
                          }
                          return controller;
                        });
}

}  // namespace nereid::gm
