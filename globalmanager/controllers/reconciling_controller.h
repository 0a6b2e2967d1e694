#pragma once

// ReconcilingController: the usual GmController — informers whose handlers only enqueue keys, a
// kube::Controller (rate-limited workqueue + workers) and a level-based Reconcile(key), timed and
// counted in ControllerMetrics. A kind's controller derives from it, calls Watch*/Read in its
// constructor and implements Reconcile (see README.md for a complete example):
//
//   class FooController final : public ReconcilingController {
//    public:
//     explicit FooController(const ControllerContext& ctx) : ReconcilingController("foo", ctx) {
//       foos_ = Watch(api::resources::Foos());                  // own keys
//       pods_ = WatchOwned(kube::resources::Pods(), "Foo");     // pods enqueue their owner
//     }
//    private:
//     absl::StatusOr<kube::ReconcileResult> Reconcile(const std::string& key) override;
//     kube::SharedInformer* foos_;
//     kube::SharedInformer* pods_;
//   };
//
// Reconcile's result follows kube::Controller: an error retries with backoff (NotFound does not),
// requeue_after re-adds the key later. Derived classes call Stop() in their destructor (workers
// call the virtual Reconcile). Kinds on the common job library derive from LibraryJobController
// (library_job_controller.h), which wires the library on top of this.

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/kube/controller.h"
#include "common/kube/resource.h"
#include "common/kube/shared_informer.h"
#include "globalmanager/controllers/controller_context.h"
#include "globalmanager/controllers/gm_controller.h"

namespace nereid::gm {

class ReconcilingController : public GmController {
 public:
  ReconcilingController(std::string name, const ControllerContext& context);
  ~ReconcilingController() override;

  const std::string& name() const override { return name_; }
  std::vector<kube::SharedInformer*> informers() const override { return informers_; }
  absl::Status Start() override;
  void Stop() override;

  // --- constructor-time wiring ---
  // The informer of `resource` in the daemon's namespace scope; its changes enqueue the object's
  // own key.
  kube::SharedInformer* Watch(const kube::Resource& resource);
  kube::SharedInformer* Watch(const kube::Resource& resource, kube::InformerOptions options);
  // Changes of objects whose controller owner is of `owner_kind` enqueue that owner's key.
  kube::SharedInformer* WatchOwned(const kube::Resource& resource, std::string owner_kind);
  // An informer the reconciler reads without reacting to its changes (still waited on).
  kube::SharedInformer* Read(const kube::Resource& resource);

  void Enqueue(const std::string& key) { runner_.Enqueue(key); }
  void EnqueueAfter(const std::string& key, absl::Duration delay) {
    runner_.queue().AddAfter(key, delay);
  }
  kube::Controller& runner() { return runner_; }
  const ControllerContext& context() const { return context_; }

  // The start of a Reconcile: the object `key` as `informer` caches it, or null when it is gone or
  // being deleted — then `forget` has run (withdraw it from the edge, drop what is remembered of
  // it). A cache error or `forget`'s error is returned.
  static absl::StatusOr<kube::ObjectPtr> LiveOrForget(kube::SharedInformer* informer,
                                                      const std::string& key,
                                                      const std::function<absl::Status()>& forget);

 protected:
  virtual absl::StatusOr<kube::ReconcileResult> Reconcile(const std::string& key) = 0;

 private:
  // The kube::Reconciler the runner calls: Reconcile + metrics.
  class Instrumented final : public kube::Reconciler {
   public:
    explicit Instrumented(ReconcilingController* owner) : owner_(owner) {}
    absl::StatusOr<kube::ReconcileResult> Reconcile(const std::string& key) override;

   private:
    ReconcilingController* const owner_;
  };

  kube::SharedInformer* Track(kube::SharedInformer* informer);

  const std::string name_;
  const ControllerContext context_;
  Instrumented instrumented_;
  kube::Controller runner_;
  std::vector<kube::SharedInformer*> informers_;
};

}  // namespace nereid::gm
