#include "globalmanager/controllers/library_job_controller.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/api/sedna_contract.h"
#include "common/job/event_reasons.h"
#include "common/job/owner_handler.h"
#include "common/kube/errors.h"
#include "globalmanager/controllers/controller_events.h"
#include "globalmanager/controllers/worker_template.h"

namespace nereid::gm {

LibraryJobController::LibraryJobController(std::string name, const ControllerContext& context,
                                           const kube::Resource& resource, std::string_view kind,
                                           LibraryJobOptions options)
    : ReconcilingController(std::move(name), context),
      jobs_(Watch(resource)),
      pods_(Read(kube::resources::Pods())),
      services_(Read(kube::resources::Services())),
      children_(pods_->GetLister(), services_->GetLister()),
      expectations_(context.clock),
      gang_(context.client, context.clock, options.gang_discovery_ttl),
      engine_(context.client, &children_, &expectations_, &gang_, context.events, context.clock,
              options.reconcile),
      resource_(resource),
      kind_(kind) {
  // Pod and Service events settle the expectations and enqueue the owning job.
  pods_->AddEventHandler(job::ObservingOwnerHandler(&runner(), kind_, &expectations_));
  services_->AddEventHandler(job::ObservingOwnerHandler(&runner(), kind_, &expectations_));
}

absl::StatusOr<std::optional<StatusWrite>> LibraryJobController::WriteJobStatus(
    const std::string& key, const kube::ObjectPtr& object,
    const std::function<void(kube::Json*)>& apply) {
  return WriteLibraryJobStatus(*context().client, resource_,
                               job::JobIdentity::FromObject(*object, resource_), object, apply,
                               expectations_, key);
}

absl::Status LibraryJobController::EnsureWorkerService(const std::string& key,
                                                       const kube::Json& object,
                                                       std::string_view worker_type, int32_t port,
                                                       const std::vector<kube::ObjectPtr>& services) {
  const WorkerOwner owner = WorkerOwner::FromObject(kind_, object);
  const std::string name = api::ServiceName(owner.name, worker_type);
  for (const kube::ObjectPtr& svc : services) {
    if (kube::Name(*svc) == name && !kube::IsBeingDeleted(*svc)) return absl::OkStatus();
  }
  kube::Json service = BuildWorkerService(owner, worker_type, {{port, port, "", "TCP"}});
  expectations_.ExpectCreations(key, 1);
  absl::StatusOr<kube::Json> created =
      context().client->Create(kube::resources::Services(), owner.ns, service);
  if (!created.ok()) {
    expectations_.CreationObserved(key);
    if (absl::IsAlreadyExists(created.status())) return absl::OkStatus();  // Cache lag.
    RecordEvent(context(), resource_, object, kube::EventType::kWarning,
                job::event_reasons::kFailedCreateService,
                absl::StrCat("Error creating service ", name, ": ", created.status().message()));
    return created.status();
  }
  RecordEvent(context(), resource_, object, kube::EventType::kNormal,
              job::event_reasons::kSuccessfulCreateService,
              absl::StrCat("Created service: ", name));
  return absl::OkStatus();
}

}  // namespace nereid::gm
