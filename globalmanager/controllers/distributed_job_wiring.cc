#include "globalmanager/controllers/distributed_job_wiring.h"

#include <utility>

#include "common/job/distributed_job.h"
#include "common/log/log.h"
#include "globalmanager/controllers/distributed_job_controller.h"

namespace nereid::gm {
namespace {

// DistributedJobRunner (the job engineer's: informers from the shared factory, child lister,
// expectations, gang availability, its own handlers) under the GmController lifecycle.
class DistributedJobGmController final : public GmController {
 public:
  explicit DistributedJobGmController(const ControllerContext& context)
      : runner_(context.client, context.informers, context.events, context.clock,
                {.ns = context.settings.ns,
                 .workers = context.settings.workers,
                 .lc_server = context.settings.lc_server}) {}
  ~DistributedJobGmController() override { runner_.Stop(); }

  const std::string& name() const override { return name_; }
  std::vector<kube::SharedInformer*> informers() const override { return runner_.informers(); }
  absl::Status Start() override { return runner_.Start(); }
  void Stop() override { runner_.Stop(); }

 private:
  const std::string name_ = "distributedjob";
  DistributedJobRunner runner_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<GmController>> MakeDistributedJobController(
    ControllerContext& context) {
  absl::StatusOr<bool> served = context.client->IsServed(job::DistributedJobs());
  if (!served.ok()) return served.status();
  if (!*served) {
    LOG(WARNING) << "controllers: distributedjobs.sedna.io is not served (CRD not installed); "
                    "the DistributedJob controller is off";
    return std::unique_ptr<GmController>();
  }
  return std::unique_ptr<GmController>(std::make_unique<DistributedJobGmController>(context));
}

}  // namespace nereid::gm
