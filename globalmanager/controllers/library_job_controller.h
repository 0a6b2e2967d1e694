#pragma once

// LibraryJobController: the ReconcilingController of a kind on the common job library (common/job)
// — DistributedJob, FederatedLearningJob, VideoAnalyticsJob/ReidJob, IncrementalLearningJob/
// LifelongLearningJob. It wires the library once: the kind's informer (its changes enqueue the
// job), the pod and Service informers (their events settle the job's expectations and enqueue the
// owning job), the child lister over their caches, the expectations, the gang check and the
// engine (job::JobReconciler). A kind derives from it and implements Reconcile; the runner, the
// reconcile metrics and RecordEvent are the ReconcilingController's, as for every controller.
//
//   class MyJobController final : public LibraryJobController {
//     MyJobController(const ControllerContext& context)
//         : LibraryJobController("myjob", context, MyJobs(), "MyJob") {}
//     absl::StatusOr<kube::ReconcileResult> Reconcile(const std::string& key) override {
//       // LiveOrForget(jobs_, key, ...), a job::JobRequest, engine_.Reconcile(request),
//       // WriteJobStatus(...) when result.status_changed (common/job/README.md).
//     }
//   };

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/job/child_lister.h"
#include "common/job/expectations.h"
#include "common/job/gang.h"
#include "common/job/job_reconciler.h"
#include "common/kube/resource.h"
#include "common/kube/shared_informer.h"
#include "globalmanager/controllers/controller_context.h"
#include "globalmanager/controllers/reconciling_controller.h"
#include "globalmanager/controllers/status_writer.h"

namespace nereid::gm {

struct LibraryJobOptions {
  job::JobReconcilerOptions reconcile;
  // How long the answer "are PodGroups served" is reused (job::GangAvailability).
  absl::Duration gang_discovery_ttl = absl::Seconds(30);
};

class LibraryJobController : public ReconcilingController {
 public:
  // The job's expectations (for tests and diagnostics).
  job::Expectations& expectations() { return expectations_; }

 protected:
  // `resource` is the kind's (`kind` its Kind, the owner kind of its pods and Services).
  LibraryJobController(std::string name, const ControllerContext& context,
                       const kube::Resource& resource, std::string_view kind,
                       LibraryJobOptions options = {});

  const kube::Resource& resource() const { return resource_; }

  // The library's status write of the job `key` (WriteLibraryJobStatus): `apply` to the status
  // read, then the status fence. nullopt when the job is gone meanwhile.
  absl::StatusOr<std::optional<StatusWrite>> WriteJobStatus(
      const std::string& key, const kube::ObjectPtr& object,
      const std::function<void(kube::Json*)>& apply);

  // Sedna's worker Service "<job>-<worker type>" (ClusterIP, `port` named tcp-0, selecting the
  // job's workers of that type), created unless `services` (the job's) already hold it; created
  // with the expectations, Events SuccessfulCreateService / FailedCreateService.
  absl::Status EnsureWorkerService(const std::string& key, const kube::Json& object,
                                   std::string_view worker_type, int32_t port,
                                   const std::vector<kube::ObjectPtr>& services);

  // The library's parts, shared with the derived kind. Declaration order is initialization
  // order: the child lister reads the pod and Service informers, the engine uses the lister, the
  // expectations and the gang check.
  kube::SharedInformer* const jobs_;
  kube::SharedInformer* const pods_;
  kube::SharedInformer* const services_;
  job::CacheChildLister children_;
  job::Expectations expectations_;
  job::GangAvailability gang_;
  job::JobReconciler engine_;

 private:
  const kube::Resource& resource_;
  const std::string kind_;
};

}  // namespace nereid::gm
