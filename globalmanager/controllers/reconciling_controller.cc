#include "globalmanager/controllers/reconciling_controller.h"

#include <utility>

#include "common/kube/object.h"
#include "common/status/macros.h"
#include "globalmanager/controllers/controller_metrics.h"

namespace nereid::gm {
namespace {

kube::ControllerOptions RunnerOptions(const ControllerContext& context) {
  kube::ControllerOptions options;
  options.workers = context.settings.workers;
  options.clock = context.clock;
  return options;
}

}  // namespace

ReconcilingController::ReconcilingController(std::string name, const ControllerContext& context)
    : name_(std::move(name)),
      context_(context),
      instrumented_(this),
      runner_(name_, &instrumented_, RunnerOptions(context_)) {
  if (context_.metrics != nullptr) context_.metrics->TrackWorkQueue(name_, &runner_.queue());
}

ReconcilingController::~ReconcilingController() {
  if (context_.metrics != nullptr) context_.metrics->UntrackWorkQueue(&runner_.queue());
  runner_.Stop();
}

absl::Status ReconcilingController::Start() { return runner_.Start(informers_); }

void ReconcilingController::Stop() { runner_.Stop(); }

kube::SharedInformer* ReconcilingController::Track(kube::SharedInformer* informer) {
  for (kube::SharedInformer* known : informers_) {
    if (known == informer) return informer;
  }
  informers_.push_back(informer);
  return informer;
}

kube::SharedInformer* ReconcilingController::Watch(const kube::Resource& resource) {
  return Watch(resource, context_.ScopedInformerOptions());
}

kube::SharedInformer* ReconcilingController::Watch(const kube::Resource& resource,
                                                   kube::InformerOptions options) {
  kube::SharedInformer* informer = context_.informers->Informer(resource, std::move(options));
  informer->AddEventHandler(runner_.EnqueueHandler());
  return Track(informer);
}

kube::SharedInformer* ReconcilingController::WatchOwned(const kube::Resource& resource,
                                                        std::string owner_kind) {
  kube::SharedInformer* informer =
      context_.informers->Informer(resource, context_.ScopedInformerOptions());
  informer->AddEventHandler(runner_.EnqueueOwnerHandler(std::move(owner_kind)));
  return Track(informer);
}

kube::SharedInformer* ReconcilingController::Read(const kube::Resource& resource) {
  return Track(context_.informers->Informer(resource, context_.ScopedInformerOptions()));
}

absl::StatusOr<kube::ReconcileResult> ReconcilingController::Instrumented::Reconcile(
    const std::string& key) {
  const absl::Time start = owner_->context_.clock->Now();
  absl::StatusOr<kube::ReconcileResult> result = owner_->Reconcile(key);
  if (ControllerMetrics* metrics = owner_->context_.metrics; metrics != nullptr) {
    ControllerMetrics::ReconcileResult kind = ControllerMetrics::ReconcileResult::kSuccess;
    if (!result.ok() && !absl::IsNotFound(result.status())) {
      kind = ControllerMetrics::ReconcileResult::kError;
    } else if (result.ok() && (result->requeue || result->requeue_after > absl::ZeroDuration())) {
      kind = ControllerMetrics::ReconcileResult::kRequeue;
    }
    metrics->ObserveReconcile(owner_->name_, kind, owner_->context_.clock->Now() - start);
  }
  return result;
}

absl::StatusOr<kube::ObjectPtr> ReconcilingController::LiveOrForget(
    kube::SharedInformer* informer, const std::string& key,
    const std::function<absl::Status()>& forget) {
  absl::StatusOr<kube::ObjectPtr> cached = informer->GetLister().GetByKey(key);
  if (cached.ok() && !kube::IsBeingDeleted(**cached)) return cached;
  if (!cached.ok() && !absl::IsNotFound(cached.status())) return cached.status();
  RETURN_IF_ERROR(forget());
  return kube::ObjectPtr();
}

}  // namespace nereid::gm
