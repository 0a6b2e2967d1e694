#pragma once

// ControllerRegistry: kind → controller factory (Sedna's controllers/registry.go). The daemon
// creates every registered controller from one ControllerContext, in registration order, then
// primes and starts them in that order (gm_controller.h). DefaultRegistry() lists Nereid's
// controllers; a new kind adds one line there (README.md shows how).

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "common/kube/resource.h"
#include "globalmanager/controllers/controller_context.h"
#include "globalmanager/controllers/gm_controller.h"

namespace nereid::gm {

// May set fields of `context` for controllers created after it (the Model controller sets
// context.models). A null controller means "skip this kind" (e.g. its CRD is not installed).
using ControllerFactory =
    std::function<absl::StatusOr<std::unique_ptr<GmController>>(ControllerContext& context)>;

// For the factory of a kind whose CRD may not be installed: whether the API serves `resource`.
// False is logged (that kind's controller is off) and the factory returns a null controller; an
// error means the API could not tell.
absl::StatusOr<bool> ServedOrLogOff(const ControllerContext& context,
                                    const kube::Resource& resource);

// A controller made by a kind's Create(), as a GmController (errors pass through).
template <typename Controller>
absl::StatusOr<std::unique_ptr<GmController>> AsGmController(
    absl::StatusOr<std::unique_ptr<Controller>> made) {
  if (!made.ok()) return made.status();
  return std::unique_ptr<GmController>(*std::move(made));
}

// The one "create if the CRD is served" factory body: `create(context)` (returning
// StatusOr<unique_ptr<T>> for a GmController T) unless the API does not serve `resource`; then a
// null controller (the kind is skipped, with a warning), so a cluster without that CRD still gets
// a GM whose caches sync.
//
//   registry.Add("JointInferenceService", [](ControllerContext& context) {
//     return CreateIfServed(context, api::resources::JointInferenceServices(),
//                           &JointInferenceController::Create);
//   });
template <typename Create>
absl::StatusOr<std::unique_ptr<GmController>> CreateIfServed(ControllerContext& context,
                                                             const kube::Resource& resource,
                                                             Create&& create) {
  absl::StatusOr<bool> served = ServedOrLogOff(context, resource);
  if (!served.ok()) return served.status();
  if (!*served) return std::unique_ptr<GmController>();
  return AsGmController(std::forward<Create>(create)(context));
}

class ControllerRegistry {
 public:
  // AlreadyExists for a name registered twice.
  absl::Status Add(std::string name, ControllerFactory factory);
  std::vector<std::string> Names() const;
  // Creates every controller; the first failure is returned (naming the controller).
  absl::StatusOr<std::vector<std::unique_ptr<GmController>>> CreateAll(
      ControllerContext& context) const;

 private:
  struct Entry {
    std::string name;
    ControllerFactory factory;
  };
  std::vector<Entry> entries_;
};

// Model (first: later controllers use its ModelRequirements), Dataset, then the workload kinds,
// each only when its CRD is served.
ControllerRegistry DefaultRegistry();

}  // namespace nereid::gm
