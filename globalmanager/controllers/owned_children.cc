#include "globalmanager/controllers/owned_children.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/api/sedna_contract.h"
#include "common/kube/client.h"
#include "common/kube/errors.h"
#include "common/kube/selector.h"
#include "common/log/log.h"
#include "common/strings/absl_compat.h"
#include "globalmanager/controllers/controller_events.h"

namespace nereid::gm {
namespace {

using kube::Json;

// "Deployment x", or "Pod x-" for a pod with a generated name not created yet.
std::string Describe(const kube::Resource& resource, const Json& child) {
  std::string name = kube::Name(child);
  if (name.empty()) name = kube::StringAt(child, "metadata.generateName");
  return absl::StrCat(resource.kind, " ", name);
}

// `existing` with what the owner asks of it (the header says what that is).
Json Updated(const kube::Resource& resource, const Json& existing, const Json& desired,
             bool replicas_owned) {
  Json updated = existing;
  const Json* desired_spec = kube::FindPath(desired, "spec");
  Json spec = desired_spec != nullptr ? *desired_spec : Json::object();
  if (resource.kind == "Service") {
    updated["spec"]["ports"] = spec.value("ports", Json::array());
    updated["spec"]["selector"] = spec.value("selector", Json::object());
  } else {
    if (resource.kind == "Deployment") {
      if (const Json* selector = kube::FindPath(existing, "spec.selector"); selector != nullptr) {
        spec["selector"] = *selector;  // Immutable.
      }
      const Json* replicas = kube::FindPath(existing, "spec.replicas");
      if ((!replicas_owned || !spec.contains("replicas")) && replicas != nullptr) {
        spec["replicas"] = *replicas;  // An HPA's, or the default the API server set.
      }
    }
    updated["spec"] = std::move(spec);
  }
  if (const Json* labels = kube::FindPath(desired, "metadata.labels");
      labels != nullptr && labels->is_object()) {
    for (const auto& [k, v] : labels->items()) updated["metadata"]["labels"][k] = v;
  }
  updated["metadata"]["annotations"][std::string(kTemplateHashAnnotation)] =
      TemplateHashOf(desired);
  return updated;
}

}  // namespace

OwnedChildSync::OwnedChildSync(const ControllerContext& context,
                               const kube::Resource& owner_resource, const Json& owner,
                               std::vector<std::string>* problems)
    : context_(context),
      owner_resource_(owner_resource),
      object_(owner),
      owner_(WorkerOwner::FromObject(owner_resource.kind, owner)),
      problems_(problems) {}

void OwnedChildSync::Record(kube::EventType type, std::string_view reason,
                            std::string_view message) const {
  RecordEvent(context_, owner_resource_, object_, type, reason, message);
}

void OwnedChildSync::Log(std::string_view what) const {
  LOG(INFO) << api::LowerKind(owner_.kind) << " " << kube::Key(object_) << ": " << what;
}

absl::Status OwnedChildSync::Create(const OwnedChildren& children, const Json& desired) {
  absl::StatusOr<Json> created =
      context_.client->Create(*children.resource, owner_.ns, desired);
  if (created.ok()) {
    children.created->Created(*created);
    const std::string what = absl::StrCat("Created ", Describe(*children.resource, *created));
    Log(what);
    Record(kube::EventType::kNormal, child_reasons::kSuccessfulCreate, what);
    return absl::OkStatus();
  }
  const std::string what = Describe(*children.resource, desired);
  // The cache has not seen it yet; its informer event reconciles the owner again.
  if (absl::IsAlreadyExists(created.status())) return absl::OkStatus();
  if (kube::IsInvalid(created.status())) {
    problems_->push_back(
        absl::StrCat(what, " refused by the API server: ", created.status().message()));
    return absl::OkStatus();
  }
  Record(kube::EventType::kWarning, child_reasons::kFailedCreate,
         absl::StrCat("Error creating ", what, ": ", created.status().message()));
  return created.status();
}

absl::Status OwnedChildSync::Apply(const OwnedChildren& children, const Json& desired,
                                   bool replicas_owned) {
  const kube::ObjectPtr cached =
      children.created->Get(children.informer->GetLister(), owner_.ns, kube::Name(desired));
  if (cached == nullptr) return Create(children, desired);
  const Json& existing = *cached;
  const std::string what = Describe(*children.resource, desired);
  if (!IsControlledBy(existing, owner_)) {
    problems_->push_back(absl::StrCat(what, " exists and is not controlled by this service"));
    Record(kube::EventType::kWarning, child_reasons::kChildConflict,
           absl::StrCat(what, " exists and is not controlled by this service; delete or rename it"));
    return absl::OkStatus();
  }
  const bool spec_changed = TemplateHashOf(existing) != TemplateHashOf(desired);
  const Json* want_replicas = kube::FindPath(desired, "spec.replicas");
  const Json* have_replicas = kube::FindPath(existing, "spec.replicas");
  const bool scaled = replicas_owned && want_replicas != nullptr && have_replicas != nullptr &&
                      *want_replicas != *have_replicas;
  if (!spec_changed && !scaled) return absl::OkStatus();

  absl::StatusOr<Json> result = context_.client->Update(
      *children.resource, Updated(*children.resource, existing, desired, replicas_owned));
  if (result.ok()) {
    const std::string why =
        spec_changed ? "the spec changed"
                     : absl::StrCat("replicas set to ", want_replicas->dump(), " as the spec says");
    const std::string message = absl::StrCat("Updated ", what, ": ", why);
    Log(message);
    Record(kube::EventType::kNormal, child_reasons::kSuccessfulUpdate, message);
    return absl::OkStatus();
  }
  if (kube::IsInvalid(result.status())) {
    problems_->push_back(
        absl::StrCat(what, " update refused by the API server: ", result.status().message()));
    return absl::OkStatus();
  }
  if (absl::IsNotFound(result.status())) return absl::OkStatus();  // Its deletion event follows.
  return result.status();  // Conflict: the cache was behind; retried.
}

absl::Status OwnedChildSync::Delete(const kube::Resource& resource, const Json& child,
                                    std::string_view why) {
  kube::DeleteOptions options;
  options.propagation_policy = "Background";
  absl::Status deleted = context_.client->Delete(resource, owner_.ns, kube::Name(child), options);
  if (absl::IsNotFound(deleted)) return absl::OkStatus();
  if (!deleted.ok()) return deleted;
  const std::string message = absl::StrCat("Deleted ", Describe(resource, child), ": ", ToAbsl(why));
  Log(message);
  Record(kube::EventType::kNormal, child_reasons::kSuccessfulDelete, message);
  return absl::OkStatus();
}

absl::Status OwnedChildSync::DeleteUnwanted(const OwnedChildren& children,
                                            const std::set<std::string>& wanted,
                                            std::string_view why) {
  absl::Status status;
  for (const kube::ObjectPtr& child : children.informer->GetLister().List(
           owner_.ns, kube::LabelSelector::FromMap(owner_.SelectorLabels()))) {
    if (!IsControlledBy(*child, owner_) || wanted.count(kube::Name(*child)) > 0 ||
        kube::IsBeingDeleted(*child)) {
      continue;
    }
    status.Update(Delete(*children.resource, *child, why));
  }
  return status;
}

}  // namespace nereid::gm
