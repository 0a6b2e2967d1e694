#pragma once

// OwnedChildSync: the one way the children a service builds from its spec — Deployments, Services,
// HorizontalPodAutoscalers, pods — follow that spec (JointInferenceService and the multi-edge
// services). One per reconcile pass of one owner:
//   Apply(children, desired)  a missing child is created (what CreatedChildren holds counts as
//                             there); one whose kTemplateHashAnnotation differs from `desired`'s is
//                             updated in place — a Service only its ports and selector (clusterIP
//                             and the other defaulted fields stay), a Deployment its spec but the
//                             immutable selector, anything else its spec — with the desired labels
//                             merged in; a Deployment someone scaled gets the spec's replicas back
//                             unless an HPA owns them. A child of that name the owner does not
//                             control is left alone (ChildConflict).
//   Create(children, desired) a create only (pods with generated names: the caller picks slots).
//   Delete(resource, child, why), DeleteUnwanted(children, wanted, why).
// Problems the user must fix (the API server refusing a child as invalid, a name taken by someone
// else) go to `problems`, for the caller's status; other API errors are returned (retried).
// Events on the owner: SuccessfulCreate/Update/Delete, FailedCreate, ChildConflict.

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "common/kube/object.h"
#include "common/kube/resource.h"
#include "common/kube/shared_informer.h"
#include "globalmanager/controllers/controller_context.h"
#include "globalmanager/controllers/created_children.h"
#include "globalmanager/controllers/worker_template.h"

namespace nereid::gm {

namespace child_reasons {
inline constexpr std::string_view kSuccessfulCreate = "SuccessfulCreate";
inline constexpr std::string_view kSuccessfulUpdate = "SuccessfulUpdate";
inline constexpr std::string_view kSuccessfulDelete = "SuccessfulDelete";
inline constexpr std::string_view kFailedCreate = "FailedCreate";
inline constexpr std::string_view kChildConflict = "ChildConflict";
}  // namespace child_reasons

// One kind of child an owner controls: its resource, the informer that shows them and what was
// created that the informer may not show yet.
struct OwnedChildren {
  const kube::Resource* resource = nullptr;
  kube::SharedInformer* informer = nullptr;
  CreatedChildren* created = nullptr;
};

class OwnedChildSync {
 public:
  // `owner` (of `owner_resource`) must outlive this; so must `problems`.
  OwnedChildSync(const ControllerContext& context, const kube::Resource& owner_resource,
                 const kube::Json& owner, std::vector<std::string>* problems);

  // `replicas_owned`: whether the spec's spec.replicas is restored when someone scaled the child
  // (false when an HPA owns them).
  absl::Status Apply(const OwnedChildren& children, const kube::Json& desired,
                     bool replicas_owned = true);
  absl::Status Create(const OwnedChildren& children, const kube::Json& desired);
  absl::Status Delete(const kube::Resource& resource, const kube::Json& child,
                      std::string_view why);
  // Deletes the children the owner controls whose names are not in `wanted`.
  absl::Status DeleteUnwanted(const OwnedChildren& children, const std::set<std::string>& wanted,
                              std::string_view why);

  const WorkerOwner& owner() const { return owner_; }

 private:
  void Record(kube::EventType type, std::string_view reason, std::string_view message) const;
  void Log(std::string_view what) const;

  const ControllerContext& context_;
  const kube::Resource& owner_resource_;
  const kube::Json& object_;
  const WorkerOwner owner_;
  std::vector<std::string>* const problems_;
};

}  // namespace nereid::gm
