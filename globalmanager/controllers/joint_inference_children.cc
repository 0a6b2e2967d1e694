// JointInferenceController: the children a service's spec asks for — worker Deployments, the cloud
// worker's Service, HorizontalPodAutoscalers — created, updated to the spec and deleted when no
// longer wanted (joint_inference_controller.h, "Children").
#include <set>
#include <string>
#include <vector>

#include "common/api/sedna_contract.h"
#include "globalmanager/controllers/joint_inference_controller.h"
#include "globalmanager/controllers/owned_children.h"

namespace nereid::gm {
namespace {

using kube::Json;

const kube::Resource& Services() { return api::resources::JointInferenceServices(); }

}  // namespace

ChildPresence JointInferenceController::Presence(const Json& object,
                                                 const JiChildren& children) const {
  const std::string ns = kube::Namespace(object);
  ChildPresence presence;
  auto count = [&presence](const kube::ObjectPtr& child) {
    ++(child != nullptr ? presence.present : presence.missing);
  };
  count(created_services_.Get(k8s_services_->GetLister(), ns, kube::Name(children.service)));
  for (const JiDeployment& d : children.deployments) {
    count(created_deployments_.Get(deployments_->GetLister(), ns, kube::Name(d.object)));
  }
  for (const Json& h : children.hpas) {
    count(created_hpas_.Get(hpas_->GetLister(), ns, kube::Name(h)));
  }
  return presence;
}

absl::Status JointInferenceController::SyncChildren(const Json& object, const JiChildren& children,
                                                    std::vector<std::string>* problems) {
  OwnedChildSync sync(context(), Services(), object, problems);
  const OwnedChildren deployments{&kube::resources::Deployments(), deployments_,
                                  &created_deployments_};
  const OwnedChildren hpas{&kube::resources::HorizontalPodAutoscalers(), hpas_, &created_hpas_};
  // The Service first: the edge worker's BIG_MODEL_IP names it.
  absl::Status status =
      sync.Apply({&kube::resources::Services(), k8s_services_, &created_services_},
                 children.service);
  std::set<std::string> wanted;
  for (const JiDeployment& d : children.deployments) {
    wanted.insert(kube::Name(d.object));
    status.Update(sync.Apply(deployments, d.object, /*replicas_owned=*/!d.has_hpa));
  }
  // Worker Deployments this service no longer asks for (e.g. a node no longer selected).
  status.Update(sync.DeleteUnwanted(deployments, wanted, "no longer selected"));
  wanted.clear();
  for (const Json& h : children.hpas) {
    wanted.insert(kube::Name(h));
    status.Update(sync.Apply(hpas, h));
  }
  status.Update(sync.DeleteUnwanted(hpas, wanted, "no longer in the spec"));
  return status;
}

}  // namespace nereid::gm
