#pragma once

// GmController: what the daemon runs for each enabled kind (see registry.h and README.md).
//
// Lifecycle, driven by the daemon on the leader only:
//   1. constructed from a ControllerContext: asks the informer factory for its informers, adds
//      their (enqueue-only) handlers and registers its ReportSink with the ReportRouter;
//   2. the factory starts and the daemon waits until informers() have synced;
//   3. PrimeEdge(): synchronously puts every object it sends to edge nodes into the EdgeDispatcher
//      (after all controllers primed, the hub is told the registry is complete and only then
//      removes from a reconnecting node what it should no longer hold);
//   4. Start(): reconcile workers run;
//   5. Stop(): workers finish the key they hold and exit. Then the controller is destroyed.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/kube/shared_informer.h"

namespace nereid::gm {

class GmController {
 public:
  virtual ~GmController() = default;

  virtual const std::string& name() const = 0;
  // The informers the controller reads; Start() waits for them.
  virtual std::vector<kube::SharedInformer*> informers() const = 0;
  virtual absl::Status PrimeEdge() { return absl::OkStatus(); }
  virtual absl::Status Start() = 0;
  virtual void Stop() = 0;
};

}  // namespace nereid::gm
