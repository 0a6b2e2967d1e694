// JobReconciler: gang scheduling (step 8 of job_reconciler.h) — the job's Volcano PodGroup kept
// in line with the spec, and whether its pods may be created yet.
#include <string>

#include "absl/strings/str_cat.h"
#include "common/job/event_reasons.h"
#include "common/job/gang.h"
#include "common/job/job_reconciler_pass.h"
#include "common/log/log.h"

namespace nereid::job {

using kube::EventType;
using kube::Json;
namespace ct = condition_types;

bool JobReconciler::Pass::SyncGang(bool* gang_enabled) {
  *gang_enabled = false;
  if (!spec_.run_policy.scheduling_policy.has_value()) {
    RemoveCondition(&st_, ct::kGangSchedulingUnavailable);
    return true;
  }
  bool served = false;
  if (r_->gang_ != nullptr) {
    absl::StatusOr<bool> s = r_->gang_->PodGroupsServed();
    if (!s.ok()) {
      NoteError(s.status());
      return false;
    }
    served = *s;
  }
  if (!served) {
    gang_unavailable_ = true;
    if (Condition(ct::kGangSchedulingUnavailable, kTrue, reasons::kPodGroupNotServed,
                  "spec.runPolicy.schedulingPolicy is set, but this cluster does not serve "
                  "scheduling.volcano.sh/v1beta1 PodGroups (Volcano is not installed): pods are "
                  "created without gang scheduling")) {
      Event(EventType::kWarning, ct::kGangSchedulingUnavailable,
            "Volcano PodGroups are not served; pods are created without gang scheduling");
    }
    return true;
  }
  RemoveCondition(&st_, ct::kGangSchedulingUnavailable);
  *gang_enabled = true;

  Json desired = BuildPodGroup(id_, spec_);
  absl::StatusOr<Json> current = r_->client_->Get(kube::resources::PodGroups(), id_.ns, id_.name);
  if (absl::IsNotFound(current.status())) {
    absl::StatusOr<Json> created =
        r_->client_->Create(kube::resources::PodGroups(), id_.ns, desired);
    if (!created.ok()) {
      // The resource may have gone (Volcano uninstalled): ask discovery again next time.
      if (absl::IsNotFound(created.status())) r_->gang_->Invalidate();
      Event(EventType::kWarning, event_reasons::kFailedCreatePodGroup,
            absl::StrCat("Error creating PodGroup: ", created.status().message()));
      NoteError(created.status());
      return false;
    }
    Event(EventType::kNormal, event_reasons::kSuccessfulCreatePodGroup,
          absl::StrCat("Created PodGroup ", id_.name, " (minMember ",
                       desired["spec"]["minMember"].get<int>(), ")"));
    return PodGroupAdmitted(*created);
  }
  if (!current.ok()) {
    NoteError(current.status());
    return false;
  }
  if (kube::ControllerOf(*current).value_or(kube::OwnerReference{}).uid != id_.uid) {
    Event(EventType::kWarning, event_reasons::kFailedCreatePodGroup,
          absl::StrCat("PodGroup ", id_.name, " exists and is not owned by this job"));
    NoteError(absl::FailedPreconditionError(
        absl::StrCat("PodGroup ", key_, " is not owned by job ", key_)));
    return false;
  }
  // minMember, minResources and priorityClassName follow the spec; the queue is kept (immutable
  // in Volcano).
  Json& spec = (*current)["spec"];
  bool update = false;
  if (!spec.is_object()) spec = Json::object();
  if (spec.value("minMember", -1) != desired["spec"]["minMember"].get<int>()) {
    spec["minMember"] = desired["spec"]["minMember"];
    update = true;
  }
  // minResources follows the templates (absent when nothing is requested).
  const Json want_resources = desired["spec"].value("minResources", Json());
  if (spec.value("minResources", Json()) != want_resources) {
    if (want_resources.is_null()) {
      spec.erase("minResources");
    } else {
      spec["minResources"] = want_resources;
    }
    update = true;
  }
  std::string want_priority = desired["spec"].value("priorityClassName", std::string());
  if (spec.value("priorityClassName", std::string()) != want_priority) {
    if (want_priority.empty()) {
      spec.erase("priorityClassName");
    } else {
      spec["priorityClassName"] = want_priority;
    }
    update = true;
  }
  if (update) {
    absl::StatusOr<Json> updated = r_->client_->Update(kube::resources::PodGroups(), *current);
    if (!updated.ok()) {
      NoteError(updated.status());
      return false;
    }
    return PodGroupAdmitted(*updated);
  }
  return PodGroupAdmitted(*current);
}

}  // namespace nereid::job
