// JointInferenceController: the children a service's spec asks for — worker Deployments, the cloud
// worker's Service, HorizontalPodAutoscalers — created, updated to the spec and deleted when no
// longer wanted (joint_inference_controller.h, "Children").
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/api/sedna_contract.h"
#include "common/kube/errors.h"
#include "common/log/log.h"
#include "common/strings/absl_compat.h"
#include "globalmanager/controllers/joint_inference_controller.h"
#include "globalmanager/controllers/worker_template.h"

namespace nereid::gm {
namespace {

using kube::Json;
namespace reasons = ji_reasons;

constexpr std::string_view kKind = api::kinds::kJointInferenceService;

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
  // The Service first: the edge worker's BIG_MODEL_IP names it.
  absl::Status status = SyncService(object, children, problems);
  status.Update(SyncDeployments(object, children, problems));
  status.Update(SyncHpas(object, children, problems));
  return status;
}

namespace {

// What to do about one desired child given the cache.
enum class ChildAction { kCreate, kUpdate, kNone, kConflict };

ChildAction Decide(const kube::Json* existing, const WorkerOwner& owner, bool differs) {
  if (existing == nullptr) return ChildAction::kCreate;
  if (!IsControlledBy(*existing, owner)) return ChildAction::kConflict;
  return differs ? ChildAction::kUpdate : ChildAction::kNone;
}

}  // namespace

absl::Status JointInferenceController::SyncDeployments(const Json& object,
                                                       const JiChildren& children,
                                                       std::vector<std::string>* problems) {
  const WorkerOwner owner = WorkerOwner::FromObject(kKind, object);
  const kube::Resource& resource = kube::resources::Deployments();
  kube::KubeClient& client = *context().client;
  absl::Status status;
  std::set<std::string> wanted;
  for (const JiDeployment& desired : children.deployments) {
    const std::string name = kube::Name(desired.object);
    wanted.insert(name);
    const kube::ObjectPtr cached =
        created_deployments_.Get(deployments_->GetLister(), owner.ns, name);
    const Json* existing = cached.get();
    const Json* want_replicas = kube::FindPath(desired.object, "spec.replicas");
    const bool template_differs =
        existing != nullptr && TemplateHashOf(*existing) != TemplateHashOf(desired.object);
    const bool replicas_differ = existing != nullptr && !desired.has_hpa &&
                                 want_replicas != nullptr &&
                                 kube::FindPath(*existing, "spec.replicas") != nullptr &&
                                 *kube::FindPath(*existing, "spec.replicas") != *want_replicas;
    switch (Decide(existing, owner, template_differs || replicas_differ)) {
      case ChildAction::kCreate: {
        absl::StatusOr<Json> created = client.Create(resource, owner.ns, desired.object);
        if (created.ok()) {
          created_deployments_.Created(*created);
          LOG(INFO) << "jointinferenceservice " << kube::Key(object) << ": created Deployment "
                    << name;
          Record(object, kube::EventType::kNormal, reasons::kSuccessfulCreate,
                 absl::StrCat("Created Deployment ", name));
        } else if (absl::IsAlreadyExists(created.status())) {
          // The cache has not seen it yet; its informer event reconciles us again.
        } else if (kube::IsInvalid(created.status())) {
          problems->push_back(absl::StrCat(
              "Deployment ", name, " refused by the API server: ", created.status().message()));
        } else {
          Record(
              object, kube::EventType::kWarning, reasons::kFailedCreate,
              absl::StrCat("Error creating Deployment ", name, ": ", created.status().message()));
          status.Update(created.status());
        }
        break;
      }
      case ChildAction::kUpdate: {
        Json updated = *existing;
        updated["spec"]["template"] = desired.object["spec"]["template"];
        if (!desired.has_hpa && want_replicas != nullptr)
          updated["spec"]["replicas"] = *want_replicas;
        updated["metadata"]["annotations"][std::string(kTemplateHashAnnotation)] =
            TemplateHashOf(desired.object);
        for (auto& [k, v] : desired.object["metadata"]["labels"].items()) {
          updated["metadata"]["labels"][k] = v;
        }
        absl::StatusOr<Json> result = client.Update(resource, updated);
        if (result.ok()) {
          std::string what =
              template_differs
                  ? "rolling out the changed worker template"
                  : absl::StrCat("replicas set to ", want_replicas->dump(), " as the spec says");
          LOG(INFO) << "jointinferenceservice " << kube::Key(object) << ": updated Deployment "
                    << name << ": " << what;
          Record(object, kube::EventType::kNormal, reasons::kSuccessfulUpdate,
                 absl::StrCat("Updated Deployment ", name, ": ", what));
        } else if (kube::IsInvalid(result.status())) {
          problems->push_back(
              absl::StrCat("Deployment ", name,
                           " update refused by the API server: ", result.status().message()));
        } else if (!absl::IsNotFound(result.status())) {
          status.Update(result.status());  // Conflict: the cache was behind; retried.
        }
        break;
      }
      case ChildAction::kConflict:
        problems->push_back(
            absl::StrCat("Deployment ", name, " exists and is not controlled by this service"));
        Record(object, kube::EventType::kWarning, reasons::kChildConflict,
               absl::StrCat("Deployment ", name,
                            " exists and is not controlled by this service; delete or rename it"));
        break;
      case ChildAction::kNone:
        break;
    }
  }
  // Worker Deployments this service no longer asks for (e.g. a node no longer selected).
  for (const kube::ObjectPtr& d : deployments_->GetLister().List(
           owner.ns, kube::LabelSelector::FromMap(owner.SelectorLabels()))) {
    const std::string name = kube::Name(*d);
    if (!IsControlledBy(*d, owner) || wanted.count(name) > 0 || kube::IsBeingDeleted(*d)) continue;
    kube::DeleteOptions options;
    options.propagation_policy = "Background";
    absl::Status deleted = client.Delete(resource, owner.ns, name, options);
    if (deleted.ok()) {
      LOG(INFO) << "jointinferenceservice " << kube::Key(object) << ": deleted Deployment " << name;
      Record(object, kube::EventType::kNormal, reasons::kSuccessfulDelete,
             absl::StrCat("Deleted Deployment ", name, " (no longer selected)"));
    } else if (!absl::IsNotFound(deleted)) {
      status.Update(deleted);
    }
  }
  return status;
}

absl::Status JointInferenceController::SyncService(const Json& object, const JiChildren& children,
                                                   std::vector<std::string>* problems) {
  const WorkerOwner owner = WorkerOwner::FromObject(kKind, object);
  const kube::Resource& resource = kube::resources::Services();
  const Json& desired = children.service;
  const std::string name = kube::Name(desired);
  const kube::ObjectPtr cached = created_services_.Get(k8s_services_->GetLister(), owner.ns, name);
  const Json* existing = cached.get();
  const bool differs = existing != nullptr && TemplateHashOf(*existing) != TemplateHashOf(desired);
  switch (Decide(existing, owner, differs)) {
    case ChildAction::kCreate: {
      absl::StatusOr<Json> created = context().client->Create(resource, owner.ns, desired);
      if (created.ok()) {
        created_services_.Created(*created);
        Record(object, kube::EventType::kNormal, reasons::kSuccessfulCreate,
               absl::StrCat("Created Service ", name));
      } else if (kube::IsInvalid(created.status())) {
        problems->push_back(absl::StrCat(
            "Service ", name, " refused by the API server: ", created.status().message()));
      } else if (!absl::IsAlreadyExists(created.status())) {
        Record(object, kube::EventType::kWarning, reasons::kFailedCreate,
               absl::StrCat("Error creating Service ", name, ": ", created.status().message()));
        return created.status();
      }
      return absl::OkStatus();
    }
    case ChildAction::kUpdate: {
      // Only what we own in the spec; clusterIP and other defaulted fields stay.
      Json updated = *existing;
      updated["spec"]["ports"] = desired["spec"]["ports"];
      updated["spec"]["selector"] = desired["spec"]["selector"];
      updated["metadata"]["annotations"][std::string(kTemplateHashAnnotation)] =
          TemplateHashOf(desired);
      absl::StatusOr<Json> result = context().client->Update(resource, updated);
      if (result.ok()) {
        Record(object, kube::EventType::kNormal, reasons::kSuccessfulUpdate,
               absl::StrCat("Updated Service ", name));
      } else if (!absl::IsNotFound(result.status())) {
        return result.status();
      }
      return absl::OkStatus();
    }
    case ChildAction::kConflict:
      problems->push_back(
          absl::StrCat("Service ", name, " exists and is not controlled by this service"));
      Record(object, kube::EventType::kWarning, reasons::kChildConflict,
             absl::StrCat("Service ", name,
                          " exists and is not controlled by this service; delete or rename it"));
      return absl::OkStatus();
    case ChildAction::kNone:
      return absl::OkStatus();
  }
  return absl::OkStatus();
}

absl::Status JointInferenceController::SyncHpas(const Json& object, const JiChildren& children,
                                                std::vector<std::string>* problems) {
  const WorkerOwner owner = WorkerOwner::FromObject(kKind, object);
  const kube::Resource& resource = kube::resources::HorizontalPodAutoscalers();
  kube::KubeClient& client = *context().client;
  absl::Status status;
  std::set<std::string> wanted;
  for (const Json& desired : children.hpas) {
    const std::string name = kube::Name(desired);
    wanted.insert(name);
    const kube::ObjectPtr cached = created_hpas_.Get(hpas_->GetLister(), owner.ns, name);
    const Json* existing = cached.get();
    const bool differs =
        existing != nullptr && TemplateHashOf(*existing) != TemplateHashOf(desired);
    switch (Decide(existing, owner, differs)) {
      case ChildAction::kCreate: {
        absl::StatusOr<Json> created = client.Create(resource, owner.ns, desired);
        if (created.ok()) {
          created_hpas_.Created(*created);
          Record(object, kube::EventType::kNormal, reasons::kSuccessfulCreate,
                 absl::StrCat("Created HorizontalPodAutoscaler ", name));
        } else if (kube::IsInvalid(created.status())) {
          problems->push_back(
              absl::StrCat("HorizontalPodAutoscaler ", name,
                           " refused by the API server: ", created.status().message()));
        } else if (!absl::IsAlreadyExists(created.status())) {
          Record(object, kube::EventType::kWarning, reasons::kFailedCreate,
                 absl::StrCat("Error creating HorizontalPodAutoscaler ", name, ": ",
                              created.status().message()));
          status.Update(created.status());
        }
        break;
      }
      case ChildAction::kUpdate: {
        Json updated = *existing;
        updated["spec"] = desired["spec"];
        updated["metadata"]["annotations"][std::string(kTemplateHashAnnotation)] =
            TemplateHashOf(desired);
        absl::StatusOr<Json> result = client.Update(resource, updated);
        if (result.ok()) {
          Record(object, kube::EventType::kNormal, reasons::kSuccessfulUpdate,
                 absl::StrCat("Updated HorizontalPodAutoscaler ", name));
        } else if (kube::IsInvalid(result.status())) {
          problems->push_back(
              absl::StrCat("HorizontalPodAutoscaler ", name,
                           " update refused by the API server: ", result.status().message()));
        } else if (!absl::IsNotFound(result.status())) {
          status.Update(result.status());
        }
        break;
      }
      case ChildAction::kConflict:
        problems->push_back(absl::StrCat("HorizontalPodAutoscaler ", name,
                                         " exists and is not controlled by this service"));
        Record(object, kube::EventType::kWarning, reasons::kChildConflict,
               absl::StrCat("HorizontalPodAutoscaler ", name,
                            " exists and is not controlled by this service"));
        break;
      case ChildAction::kNone:
        break;
    }
  }
  for (const kube::ObjectPtr& h :
       hpas_->GetLister().List(owner.ns, kube::LabelSelector::FromMap(owner.SelectorLabels()))) {
    const std::string name = kube::Name(*h);
    if (!IsControlledBy(*h, owner) || wanted.count(name) > 0 || kube::IsBeingDeleted(*h)) continue;
    absl::Status deleted = client.Delete(resource, owner.ns, name);
    if (deleted.ok()) {
      Record(object, kube::EventType::kNormal, reasons::kSuccessfulDelete,
             absl::StrCat("Deleted HorizontalPodAutoscaler ", name));
    } else if (!absl::IsNotFound(deleted)) {
      status.Update(deleted);
    }
  }
  return status;
}

}  // namespace nereid::gm
