#include "common/job/job_reconciler.h"

#include <algorithm>
#include <charconv>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/api/validation.h"
#include "common/job/conditions.h"
#include "common/job/event_reasons.h"
#include "common/job/expected_delete.h"
#include "common/job/job_reconciler_pass.h"
#include "common/job/job_validation.h"
#include "common/job/pod_failure.h"
#include "common/log/log.h"
#include "common/status/macros.h"
#include "common/strings/absl_compat.h"

namespace nereid::job {

using kube::EventType;
using kube::Json;
using kube::ObjectPtr;
namespace ct = condition_types;

namespace {

std::optional<int> ParseIndex(const std::optional<std::string>& text) {
  if (!text.has_value() || text->empty()) return std::nullopt;
  int value = 0;
  auto [ptr, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (ec != std::errc() || ptr != text->data() + text->size() || value < 0) return std::nullopt;
  return value;
}

// The status without lastReconcileTime: what decides whether a write is needed.
bool SameStatus(JobStatus a, JobStatus b) {
  a.last_reconcile_time.reset();
  b.last_reconcile_time.reset();
  return a == b;
}

void MinTimer(absl::Duration* timer, absl::Duration candidate) {
  if (candidate <= absl::ZeroDuration()) candidate = absl::Milliseconds(1);
  if (*timer == absl::ZeroDuration() || candidate < *timer) *timer = candidate;
}

CleanPodPolicy AtLeastRunning(CleanPodPolicy policy) {
  return policy == CleanPodPolicy::kNone ? CleanPodPolicy::kRunning : policy;
}

}  // namespace

SuccessRule AllTasksSucceeded() {
  return [](const JobSpec& spec, const std::map<std::string, ReplicaStatus>& counts) {
    int32_t total = 0;
    for (const Task& task : spec.tasks) {
      if (task.Replicas() == 0) continue;
      total += task.Replicas();
      auto it = counts.find(task.name);
      if (it == counts.end() || it->second.succeeded < task.Replicas()) return false;
    }
    return total > 0;
  };
}

SuccessRule TaskSucceeded(std::string task_name) {
  return [task_name](const JobSpec& spec, const std::map<std::string, ReplicaStatus>& counts) {
    const Task* task = spec.FindTask(task_name);
    if (task == nullptr || task->Replicas() == 0) return false;
    auto it = counts.find(task_name);
    return it != counts.end() && it->second.succeeded >= task->Replicas();
  };
}

absl::StatusOr<JobResult> JobReconciler::Pass::Run() {
  if (kube::IsBeingDeleted(*req_.object)) {
    r_->expectations_->Delete(key_);
    result_.status = st_;
    result_.skipped = true;
    return result_;
  }
  if (!r_->expectations_->Satisfied(key_, kube::ResourceVersion(*req_.object))) {
    LOG(DEBUG) << "job " << key_ << ": waiting for the caches to catch up";
    result_.status = st_;
    result_.skipped = true;
    result_.requeue_after = r_->expectations_->TimeToExpiry(key_);
    return result_;
  }
  const ChildLister* children = req_.children != nullptr ? req_.children : r_->children_;
  pods_ = children->Pods(id_);
  services_ = children->Services(id_);

  if (st_.FindCondition(ct::kCreated) == nullptr) {
    Condition(ct::kCreated, kTrue, reasons::kJobCreated,
              absl::StrCat(id_.kind, " ", key_, " is created."));
  }
  if (!st_.IsFinished()) {
    std::vector<kube::StatusCause> causes = ValidateJobSpec(spec_, id_.name);
    causes.insert(causes.end(), req_.invalid.begin(), req_.invalid.end());
    if (!causes.empty()) FailJob(reasons::kInvalidSpec, api::FormatCauses(causes));
  }
  if (!st_.IsFinished()) {
    if (spec_.run_policy.suspend) {
      Suspend();
      return Finish();
    }
    if (st_.IsConditionTrue(ct::kSuspended)) {
      Condition(ct::kSuspended, kFalse, reasons::kJobResumed,
                absl::StrCat(id_.kind, " ", key_, " is resumed."));
      Event(EventType::kNormal, reasons::kJobResumed, "the job is resumed; its deadline restarts");
      st_.start_time = now_;
    }
    if (!st_.start_time.has_value()) st_.start_time = now_;
    const auto& ads = spec_.run_policy.active_deadline_seconds;
    if (ads.has_value() && now_exact_ >= *st_.start_time + absl::Seconds(*ads)) {
      FailJob(reasons::kDeadlineExceeded,
              absl::StrCat(id_.kind, " ", key_,
                           " has failed because it was active longer than its "
                           "activeDeadlineSeconds (",
                           *ads, "s)."));
    }
  }
  if (!st_.IsFinished()) SyncTasks();
  if (st_.IsFinished()) CleanupFinished();
  return Finish();
}

void JobReconciler::Pass::FailJob(std::string_view reason, const std::string& message) {
  if (st_.IsFinished()) return;
  ComputeCounts();
  Condition(ct::kFailed, kTrue, reason, message);
  st_.completion_time = now_;
  finished_now_ = true;
  Event(EventType::kWarning, reason, message);
  LOG(INFO) << "job " << key_ << " failed (" << reason << "): " << message;
}

absl::Status JobReconciler::Pass::DeletePod(const Json& pod) {
  const std::string name = kube::Name(pod);
  if (kube::IsBeingDeleted(pod) || deleted_.count(name) > 0) return absl::OkStatus();
  absl::Status s =
      DeleteExpected(*r_->client_, *r_->expectations_, key_, kube::resources::Pods(), pod);
  if (!s.ok()) {
    if (!absl::IsNotFound(s)) {
      Event(EventType::kWarning, event_reasons::kFailedDeletePod,
            absl::StrCat("Error deleting pod ", name, ": ", s.message()));
      return s;
    }
  } else {
    Event(EventType::kNormal, event_reasons::kSuccessfulDeletePod,
          absl::StrCat("Deleted pod: ", name));
  }
  deleted_.insert(name);
  return absl::OkStatus();
}

absl::Status JobReconciler::Pass::DeleteService(const Json& svc) {
  if (kube::IsBeingDeleted(svc)) return absl::OkStatus();
  absl::Status s =
      DeleteExpected(*r_->client_, *r_->expectations_, key_, kube::resources::Services(), svc);
  if (!s.ok() && !absl::IsNotFound(s)) return s;
  return absl::OkStatus();
}

void JobReconciler::Pass::DeletePodGroup() {
  if (!spec_.run_policy.scheduling_policy.has_value() || r_->gang_ == nullptr) return;
  absl::StatusOr<bool> served = r_->gang_->PodGroupsServed();
  if (!served.ok() || !*served) return;
  absl::Status s = r_->client_->Delete(kube::resources::PodGroups(), id_.ns, id_.name);
  if (!s.ok() && !absl::IsNotFound(s)) NoteError(s);
}

void JobReconciler::Pass::CreatePod(const Task& task, int index, bool gang) {
  PodBuildOptions options;
  options.extra_labels = req_.labels;
  options.gang = gang;
  BuiltPod built = BuildPod(id_, spec_, task, index, options);
  if (req_.decorate_pod) {
    PodPlace place{&task, index, RankOf(spec_, task.name, index)};
    req_.decorate_pod(id_, place, &built.pod);
  }
  for (const std::string& warning : built.warnings) {
    Event(EventType::kWarning, "SetPodTemplateField", warning);
  }
  const std::string name = kube::Name(built.pod);
  r_->expectations_->ExpectCreations(key_, 1);
  absl::StatusOr<Json> created = r_->client_->Create(kube::resources::Pods(), id_.ns, built.pod);
  if (!created.ok()) {
    r_->expectations_->CreationObserved(key_);
    std::string why(created.status().message());
    if (absl::IsAlreadyExists(created.status())) {
      why = absl::StrCat("a pod named ", name,
                         " already exists and is not owned by this job (or not yet in the cache)");
    }
    Event(EventType::kWarning, event_reasons::kFailedCreatePod,
          absl::StrCat("Error creating pod ", name, ": ", why));
    NoteError(created.status());
    return;
  }
  created_.push_back(task.name);
  Event(EventType::kNormal, event_reasons::kSuccessfulCreatePod,
        absl::StrCat("Created pod: ", name));
}

void JobReconciler::Pass::EnsureService() {
  const std::string name = ServiceName(id_.name);
  for (const ObjectPtr& svc : services_) {
    if (kube::Name(*svc) == name) return;
  }
  r_->expectations_->ExpectCreations(key_, 1);
  absl::StatusOr<Json> created = r_->client_->Create(kube::resources::Services(), id_.ns,
                                                     BuildService(id_, spec_, req_.labels));
  if (!created.ok()) {
    r_->expectations_->CreationObserved(key_);
    Event(EventType::kWarning, event_reasons::kFailedCreateService,
          absl::StrCat("Error creating service ", name, ": ", created.status().message()));
    NoteError(created.status());
    return;
  }
  Event(EventType::kNormal, event_reasons::kSuccessfulCreateService,
        absl::StrCat("Created service: ", name));
}

void JobReconciler::Pass::Suspend() {
  const bool entering = !st_.IsConditionTrue(ct::kSuspended);
  for (const ObjectPtr& pod : pods_) NoteError(DeletePod(*pod));
  for (const ObjectPtr& svc : services_) NoteError(DeleteService(*svc));
  if (entering) DeletePodGroup();
  ComputeCounts();
  for (auto& [task, rs] : st_.replica_statuses) rs.active = 0;
  if (st_.IsConditionTrue(ct::kRunning) || st_.IsConditionTrue(ct::kRestarting)) {
    RemoveCondition(&st_, ct::kRestarting);
    Condition(ct::kRunning, kFalse, reasons::kJobSuspended,
              absl::StrCat(id_.kind, " ", key_, " is suspended."));
  }
  if (Condition(ct::kSuspended, kTrue, reasons::kJobSuspended,
                absl::StrCat(id_.kind, " ", key_, " is suspended."))) {
    Event(EventType::kNormal, reasons::kJobSuspended, "the job is suspended; its pods are deleted");
  }
}

void JobReconciler::Pass::SyncTasks() {
  // Slot every pod by (task, index); anything else is surplus (scale down, task removed).
  std::map<std::pair<std::string, int>, std::vector<ObjectPtr>> slots;
  std::vector<ObjectPtr> surplus;
  for (const ObjectPtr& pod : pods_) {
    std::string task_name = kube::Label(*pod, labels::kTaskName).value_or("");
    std::optional<int> index = ParseIndex(kube::Label(*pod, labels::kTaskIndex));
    const Task* task = spec_.FindTask(task_name);
    if (task == nullptr || !index.has_value() || *index >= task->Replicas()) {
      surplus.push_back(pod);
      continue;
    }
    slots[{task_name, *index}].push_back(pod);
  }
  std::vector<Retry> retries;
  std::optional<Retry> permanent;
  for (auto& [slot, list] : slots) {
    // One pod per slot: keep a live one, delete duplicates (never created by us; be safe).
    std::stable_partition(list.begin(), list.end(),
                          [](const ObjectPtr& p) { return !kube::IsBeingDeleted(*p); });
    for (size_t i = 1; i < list.size(); ++i) surplus.push_back(list[i]);
    const ObjectPtr& pod = list.front();
    if (kube::IsBeingDeleted(*pod) || PodPhase(*pod) != "Failed") continue;
    const Task* task = spec_.FindTask(slot.first);
    PodFailure failure = ClassifyFailedPod(*pod, task->EffectiveRestartPolicy());
    Retry r{pod, slot.first, slot.second, failure};
    if (failure.retryable) {
      retries.push_back(std::move(r));
    } else if (!permanent.has_value()) {
      permanent = std::move(r);
    }
  }

  // Restarts so far: recreated pods plus the container restarts of the current ones.
  std::map<std::string, int32_t> container_restarts;
  for (const auto& [slot, list] : slots)
    container_restarts[slot.first] += ContainerRestarts(*list.front());
  int64_t restarts_so_far = 0;
  for (const Task& task : spec_.tasks) {
    const ReplicaStatus old = st_.replica_statuses.count(task.name) > 0
                                  ? st_.replica_statuses.at(task.name)
                                  : ReplicaStatus{};
    restarts_so_far +=
        std::max<int64_t>(old.restarts, old.recreated + container_restarts[task.name]);
  }
  const int32_t limit = spec_.run_policy.BackoffLimit();

  if (permanent.has_value()) {
    FailJob(
        reasons::kTaskFailed,
        absl::StrCat(
            id_.kind, " ", key_, " has failed because task \"", permanent->task, "\" replica ",
            permanent->index, " failed with restartPolicy ",
            ToAbsl(RestartPolicyName(spec_.FindTask(permanent->task)->EffectiveRestartPolicy())),
            ": ", permanent->failure.Describe(), "."));
    return;
  }
  if (restarts_so_far + static_cast<int64_t>(retries.size()) > limit) {
    std::string what =
        retries.empty()
            ? std::string("containers restarted ") + std::to_string(restarts_so_far) + " times"
            : absl::StrCat("task \"", retries.front().task, "\" replica ", retries.front().index,
                           " failed (", retries.front().failure.Describe(), ") after ",
                           restarts_so_far, " restarts");
    FailJob(reasons::kBackoffLimitExceeded,
            absl::StrCat(id_.kind, " ", key_,
                         " has failed because it has reached the specified "
                         "backoff limit (",
                         limit, " restarts): ", what, "."));
    return;
  }

  for (const Retry& retry : retries) {
    absl::Status s = DeletePod(*retry.pod);
    if (!s.ok()) {
      NoteError(s);
      continue;
    }
    ++new_recreates_[retry.task];
    Event(EventType::kWarning, reasons::kJobRestarting,
          absl::StrCat("pod ", kube::Name(*retry.pod), " failed (", retry.failure.Describe(),
                       "): recreating it"));
  }
  if (!new_recreates_.empty()) {
    std::string tasks;
    for (const auto& [task, n] : new_recreates_) {
      absl::StrAppend(&tasks, tasks.empty() ? "" : ", ", "\"", task, "\"");
    }
    Condition(ct::kRestarting, kTrue, reasons::kJobRestarting,
              absl::StrCat(id_.kind, " ", key_, " is restarting because task ", tasks,
                           " replica(s) failed."));
  }
  for (const ObjectPtr& pod : surplus) NoteError(DeletePod(*pod));

  ComputeCounts();
  SuccessRule rule = req_.success_rule ? req_.success_rule : AllTasksSucceeded();
  if (rule(spec_, st_.replica_statuses)) {
    Condition(ct::kSucceeded, kTrue, reasons::kJobSucceeded,
              absl::StrCat(id_.kind, " ", key_, " is successfully completed."));
    st_.completion_time = now_;
    finished_now_ = true;
    Event(EventType::kNormal, reasons::kJobSucceeded, "the job is successfully completed");
    return;
  }

  bool gang = false;
  const bool admitted = SyncGang(&gang);
  EnsureService();
  if (!admitted) {
    gang_delay_ = gang;  // Waiting for Volcano (or the PodGroup call failed: retried).
  } else {
    for (const Task& task : spec_.tasks) {
      for (int i = 0; i < task.Replicas(); ++i) {
        if (slots.count({task.name, i}) > 0) continue;  // Present, terminating or just deleted.
        CreatePod(task, i, gang);
      }
    }
  }
  for (const std::string& task : created_) ++st_.task_status[task]["Pending"];

  // Running: enough pods up (minAvailable, else every replica). Not in the pass that restarted.
  if (new_recreates_.empty()) {
    int32_t total = spec_.TotalReplicas();
    int32_t need = total;
    if (const auto& sp = spec_.run_policy.scheduling_policy; sp.has_value() && sp->min_available) {
      need = *sp->min_available;
    }
    int64_t up = 0;
    for (const auto& [task, rs] : st_.replica_statuses) up += rs.active + rs.succeeded;
    if (need > 0 && up >= need) {
      Condition(ct::kRunning, kTrue, reasons::kJobRunning,
                absl::StrCat(id_.kind, " ", key_, " is running."));
    } else if (replacing_) {
      // As a restart after a failure: Running gives way until the new pods run.
      Condition(ct::kRestarting, kTrue, reasons::kJobRestarting,
                absl::StrCat(id_.kind, " ", key_, " is restarting: its pods are being replaced."));
    } else if (st_.IsConditionTrue(ct::kRunning)) {
      Condition(ct::kRunning, kFalse, reasons::kPodsNotRunning,
                absl::StrCat(id_.kind, " ", key_, " has fewer than ", need,
                             " pods running or succeeded."));
    }
  }
}

void JobReconciler::Pass::ComputeCounts() {
  std::map<std::string, ReplicaStatus> counts;
  std::map<std::string, PodPhaseCounts> phases;
  std::map<std::string, int32_t> container_restarts;
  for (const Task& task : spec_.tasks) {
    counts[task.name];
    phases[task.name];
  }
  for (const ObjectPtr& pod : pods_) {
    if (deleted_.count(kube::Name(*pod)) > 0) continue;
    std::string task_name = kube::Label(*pod, labels::kTaskName).value_or("");
    auto it = counts.find(task_name);
    if (it == counts.end()) continue;
    const bool deleting = kube::IsBeingDeleted(*pod);
    if (deleting && req_.replacing && req_.replacing(*pod)) {
      replacing_ = true;
      continue;
    }
    std::string phase = PodPhase(*pod);
    ++phases[task_name][phase];
    if (phase == "Running") {
      ++(deleting ? it->second.failed : it->second.active);
    } else if (phase == "Succeeded") {
      ++it->second.succeeded;
    } else if (phase == "Failed") {
      ++it->second.failed;
    }
    container_restarts[task_name] += ContainerRestarts(*pod);
  }
  for (auto& [task, rs] : counts) {
    ReplicaStatus old =
        st_.replica_statuses.count(task) > 0 ? st_.replica_statuses.at(task) : ReplicaStatus{};
    auto added = new_recreates_.find(task);
    rs.recreated = old.recreated + (added == new_recreates_.end() ? 0 : added->second);
    rs.restarts = std::max(old.restarts, rs.recreated + container_restarts[task]);
  }
  st_.replica_statuses = std::move(counts);
  st_.task_status = std::move(phases);
}

void JobReconciler::Pass::CleanupFinished() {
  CleanPodPolicy policy = spec_.run_policy.CleanPolicy();
  const api::Condition* failed = st_.FindCondition(ct::kFailed);
  // A deadline, backoff or invalid-spec failure stops whatever still runs, even with None.
  if (failed != nullptr && failed->IsTrue() && failed->reason != reasons::kTaskFailed) {
    policy = AtLeastRunning(policy);
  }
  for (const ObjectPtr& pod : pods_) {
    std::string phase = PodPhase(*pod);
    bool remove = policy == CleanPodPolicy::kAll || (policy == CleanPodPolicy::kRunning &&
                                                     (phase == "Running" || phase == "Pending"));
    if (remove) NoteError(DeletePod(*pod));
  }
  if (policy != CleanPodPolicy::kNone) {
    for (const ObjectPtr& svc : services_) NoteError(DeleteService(*svc));
  }
  if (finished_now_) {
    DeletePodGroup();
    for (auto& [task, rs] : st_.replica_statuses) {
      if (st_.IsSucceeded()) {
        rs.succeeded += rs.active;  // training-operator: a succeeded job has no active replicas.
        rs.active = 0;
      } else if (policy != CleanPodPolicy::kNone) {
        rs.active = 0;
      }
    }
  }
  // The histogram shows the pods that are left.
  std::map<std::string, PodPhaseCounts> phases;
  for (const Task& task : spec_.tasks) phases[task.name];
  for (const ObjectPtr& pod : pods_) {
    if (deleted_.count(kube::Name(*pod)) > 0) continue;
    std::string task_name = kube::Label(*pod, labels::kTaskName).value_or("");
    if (phases.count(task_name) > 0) ++phases[task_name][PodPhase(*pod)];
  }
  st_.task_status = std::move(phases);
  if (!st_.completion_time.has_value()) st_.completion_time = now_;

  const auto& ttl = spec_.run_policy.ttl_seconds_after_finished;
  if (!ttl.has_value()) return;
  absl::Time expiry = *st_.completion_time + absl::Seconds(*ttl);
  if (now_exact_ < expiry) {
    MinTimer(&result_.requeue_after, expiry - now_exact_);
    return;
  }
  kube::DeleteOptions options;
  options.propagation_policy = "Background";
  options.precondition_uid = id_.uid;
  absl::Status s = r_->client_->Delete(*req_.resource, id_.ns, id_.name, options);
  if (!s.ok() && !absl::IsNotFound(s)) {
    NoteError(s);
    return;
  }
  LOG(INFO) << "job " << key_ << " deleted: ttlSecondsAfterFinished (" << *ttl << "s) expired";
  r_->expectations_->Delete(key_);
  result_.job_deleted = true;
}

absl::StatusOr<JobResult> JobReconciler::Pass::Finish() {
  int64_t restarts = 0;
  std::string summary;
  for (const Task& task : spec_.tasks) {
    auto it = st_.replica_statuses.find(task.name);
    ReplicaStatus rs = it == st_.replica_statuses.end() ? ReplicaStatus{} : it->second;
    restarts += rs.restarts;
    absl::StrAppend(&summary, summary.empty() ? "" : ", ", task.name, " ", rs.active + rs.succeeded,
                    "/", task.Replicas());
  }
  st_.restarts = static_cast<int32_t>(std::min<int64_t>(restarts, 1 << 30));
  st_.task_summary = summary;
  st_.phase = std::string(PhaseOf(st_));

  if (!st_.IsFinished() && !st_.IsConditionTrue(ct::kSuspended) && st_.start_time.has_value() &&
      spec_.run_policy.active_deadline_seconds.has_value()) {
    absl::Time deadline =
        *st_.start_time + absl::Seconds(*spec_.run_policy.active_deadline_seconds);
    MinTimer(&result_.requeue_after, deadline - now_exact_);
  }
  if (gang_delay_) MinTimer(&result_.requeue_after, r_->options_.gang_poll_interval);
  if (gang_unavailable_ && !st_.IsFinished()) {
    MinTimer(&result_.requeue_after, r_->options_.gang_recheck_interval);
  }

  result_.status_changed = !result_.job_deleted && !SameStatus(st_, req_.status);
  if (result_.status_changed) st_.last_reconcile_time = now_;
  result_.status = std::move(st_);
  return std::move(result_);
}

// ---------------------------------------------------------------------------------------------

JobReconciler::JobReconciler(kube::KubeClient* client, const ChildLister* children,
                             Expectations* expectations, GangAvailability* gang,
                             kube::EventRecorder* recorder, Clock* clock,
                             JobReconcilerOptions options)
    : client_(client),
      children_(children),
      expectations_(expectations),
      gang_(gang),
      recorder_(recorder),
      clock_(clock),
      options_(options) {}

absl::StatusOr<JobResult> JobReconciler::Reconcile(const JobRequest& request) {
  if (request.object == nullptr || request.resource == nullptr) {
    return absl::InvalidArgumentError("JobRequest needs the job object and its resource");
  }
  Pass pass(this, request);
  return pass.Run();
}

}  // namespace nereid::job
