#include "globalmanager/controllers/staged_job_pass.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/api/sedna_contract.h"
#include "common/api/validation.h"
#include "common/job/event_reasons.h"
#include "common/job/expected_delete.h"
#include "common/job/pod_builder.h"
#include "common/log/log.h"
#include "common/status/macros.h"
#include "common/strings/absl_compat.h"
#include "globalmanager/controllers/controller_events.h"
#include "globalmanager/controllers/s3_credentials.h"
#include "globalmanager/controllers/spec_validity.h"
#include "globalmanager/controllers/stage_data.h"
#include "globalmanager/controllers/status_writer.h"

namespace nereid::gm {
namespace {

using kube::Json;
using kube::ObjectPtr;
namespace st = staged_status;
using st::ConditionsOf;
using st::EventReason;
using st::EventTypeFor;
using st::Finished;
using st::IntAt;
using st::LastTrainOutput;
using st::Lower;
using st::PinnedNode;
using st::PodPhase;
using st::PutConditions;
using st::RecordedStageNodes;
using st::SetSummary;
using st::StageNodeKey;
using st::StageRun;
using st::StatusOf;

// Sets the hot-update hostPath volume and its mount in every container (a container that already
// mounts something at /model-hot-update keeps its mount).
void AddHotUpdateVolume(const std::string& host_dir, Json* pod_template) {
  Json& spec = (*pod_template)["spec"];
  Json& volumes = spec["volumes"];
  if (!volumes.is_array()) volumes = Json::array();
  const std::string name(api::paths::kModelHotUpdateVolumeName);
  bool have = false;
  for (const Json& v : volumes) have = have || kube::StringAt(v, "name") == name;
  if (!have) {
    volumes.push_back(
        {{"name", name}, {"hostPath", {{"path", host_dir}, {"type", "DirectoryOrCreate"}}}});
  }
  auto containers = spec.find("containers");
  if (containers == spec.end() || !containers->is_array()) return;
  for (Json& c : *containers) {
    if (!c.is_object()) continue;
    Json& mounts = c["volumeMounts"];
    if (!mounts.is_array()) mounts = Json::array();
    bool present = false;
    for (const Json& m : mounts) {
      present =
          present || kube::StringAt(m, "mountPath") == api::paths::kModelHotUpdateContainerPrefix;
    }
    if (!present) {
      mounts.push_back(
          {{"name", name}, {"mountPath", std::string(api::paths::kModelHotUpdateContainerPrefix)}});
    }
  }
}

}  // namespace

std::vector<ObjectPtr> StageRunPods::Pods(const job::JobIdentity& id) const {
  std::vector<ObjectPtr> out;
  for (const ObjectPtr& pod : all_->Pods(id)) {
    if (kube::Label(*pod, job::labels::kTaskName).value_or("") == task_ &&
        kube::Label(*pod, kStageRunLabel).value_or("") == run_) {
      out.push_back(pod);
    }
  }
  return out;
}

StagedJobController::Pass::Pass(StagedJobController* c, std::string key, ObjectPtr object,
                                StagedJob job, StagedRefs refs)
    : c_(c),
      key_(std::move(key)),
      object_(std::move(object)),
      job_(std::move(job)),
      refs_(std::move(refs)),
      owner_(WorkerOwner::FromObject(c->kind_->kind(), *object_)),
      id_(job::JobIdentity::FromObject(*object_, c->kind_->resource())),
      now_(c->context().clock->Now()),
      status_(StatusOf(*object_)),
      conditions_(ConditionsOf(status_)),
      started_from_(conditions_),
      run_(StageRun::From(status_)),
      model_updates_(IntAt(status_, st::kModelUpdates)),
      rounds_(IntAt(status_, "rounds")),
      stage_nodes_(RecordedStageNodes(status_)) {}

void StagedJobController::Pass::Event(kube::EventType type, std::string_view reason,
                                      std::string_view message) {
  RecordEvent(c_->context(), c_->kind_->resource(), *object_, type, reason, message);
}

absl::Status StagedJobController::Pass::DeletePod(const Json& pod, std::string_view why) {
  if (kube::IsBeingDeleted(pod)) return absl::OkStatus();
  absl::Status s = job::DeleteExpected(*c_->context().client, c_->expectations_, key_,
                                       kube::resources::Pods(), pod);
  if (!s.ok()) {
    if (absl::IsNotFound(s)) return absl::OkStatus();
    Event(kube::EventType::kWarning, job::event_reasons::kFailedDeletePod,
          absl::StrCat("Error deleting pod ", kube::Name(pod), ": ", s.message()));
    return s;
  }
  LOG(INFO) << c_->kind_->kind() << " " << key_ << ": deleted pod " << kube::Name(pod) << " ("
            << why << ")";
  Event(kube::EventType::kNormal, job::event_reasons::kSuccessfulDeletePod,
        absl::StrCat("Deleted pod ", kube::Name(pod), ": ", ToAbsl(why)));
  return absl::OkStatus();
}

absl::StatusOr<kube::ReconcileResult> StagedJobController::Pass::Run() {
  pods_ = c_->children_.Pods(id_);
  RETURN_IF_ERROR(RunStage());
  ObserveInference();
  Transitions();
  RETURN_IF_ERROR(WriteStatus());
  if (stale_) return kube::ReconcileResult{.requeue_after = absl::Seconds(1)};
  // Only what the written status says: a pod is never removed for a transition that a racing
  // report made this pass give up.
  NoteError(SyncInference());
  CleanupStagePods();
  NoteError(PlaceOnEdge());
  if (!error_.ok()) return error_;
  return kube::ReconcileResult{.requeue_after = requeue_};
}

absl::StatusOr<std::optional<WorkerS3Options>> StagedJobController::Pass::StorageOf(
    const WorkerParams& params, std::string_view secret) {
  std::optional<CredentialProblem> problem;
  absl::StatusOr<WorkerS3Options> s3 =
      ReadWorkerS3(c_->context(), owner_.ns, UsesS3(params) ? secret : "", &problem);
  if (s3.ok()) return std::optional<WorkerS3Options>(*std::move(s3));
  if (!problem.has_value()) return s3.status();  // Transient: retried with backoff.
  if (!credentials_.has_value()) credentials_ = std::move(problem);
  // Secrets are not watched: look again after a while.
  Timer(kCredentialRecheckPeriod);
  return std::optional<WorkerS3Options>();
}

absl::Status StagedJobController::Pass::RunStage() {
  const api::Condition* latest = Latest();
  if (latest == nullptr || !stages::RunsStagePod(latest->stage) ||
      (latest->type != stages::kStarting && latest->type != stages::kRunning)) {
    return absl::OkStatus();
  }
  const std::string stage = latest->stage;
  const std::string task = Lower(stage);
  if (run_.stage != stage || run_.run <= 0) {
    // A run must be numbered before its pods exist (an old status, or edited by hand).
    run_ = StageRun{stage, run_.run + 1, {}};
    run_changed_ = true;
    facts_.run = stages::RunPhase::kNotStarted;
    return absl::OkStatus();
  }
  const std::string run_label = absl::StrCat(run_.run);

  // Pods of an earlier run of this stage hold the names this run needs: remove them first.
  bool stale = false;
  for (const ObjectPtr& pod : pods_) {
    if (kube::Label(*pod, job::labels::kTaskName).value_or("") != task) continue;
    if (kube::Label(*pod, kStageRunLabel).value_or("") == run_label) continue;
    stale = true;
    NoteError(DeletePod(*pod, absl::StrCat("left from an earlier ", task, " run")));
  }
  if (stale) {
    facts_.run = stages::RunPhase::kPending;
    return absl::OkStatus();  // The deletion's event brings the job back.
  }

  const api::PodTemplate& user_template =
      stage == stages::kTrain ? job_.train_template : job_.eval_template;
  const Json data = ParseStageData(latest->data);
  StageContext ctx{stage, &data, rounds_, LastTrainOutput(conditions_, status_)};
  WorkerParams params;
  params.worker_type = task;
  params.env = BaseWorkerEnv(owner_, task, c_->context().settings.lc_server);
  c_->kind_->StageParams(job_, refs_, ctx, &params);
  params.host_network = true;
  params.restart_policy = "OnFailure";
  params.node_name = PinnedNode(user_template, refs_.dataset_node);
  // The job's credentialName (Sedna's: for outputDir and the stage's s3 inputs).
  ASSIGN_OR_RETURN(std::optional<WorkerS3Options> s3, StorageOf(params, job_.credential_name));
  if (!s3.has_value()) {
    facts_.run = stages::RunPhase::kPending;  // The stage waits for its Secret; nothing fails.
    return absl::OkStatus();
  }
  params.s3 = *std::move(s3);
  absl::StatusOr<Json> tmpl = BuildWorkerTemplate(
      owner_, user_template, params,
      stage == stages::kTrain ? "spec.trainSpec.template" : "spec.evalSpec.template");
  if (!tmpl.ok()) {
    facts_.run = stages::RunPhase::kFailed;
    facts_.run_message = absl::StrCat("cannot build the ", task, " pod from the stage input: ",
                                      api::FormatCauses(kube::Causes(tmpl.status())).empty()
                                          ? std::string(tmpl.status().message())
                                          : api::FormatCauses(kube::Causes(tmpl.status())));
    return absl::OkStatus();
  }

  job::JobRequest req;
  req.object = object_.get();
  req.resource = &c_->kind_->resource();
  req.spec.run_policy = job_.run_policy;
  // This controller applies cleanPodPolicy itself when the stage ends (the library would also
  // take the job's headless Service); the job never finishes, so no TTL.
  req.spec.run_policy.clean_pod_policy = job::CleanPodPolicy::kNone;
  req.spec.run_policy.ttl_seconds_after_finished.reset();
  job::Task t;
  t.name = task;
  t.type = job::TaskType::kNone;
  t.replicas = 1;
  t.pod_template = *std::move(tmpl);
  req.spec.tasks.push_back(std::move(t));
  req.status = run_.status;
  req.decorate_pod = [run_label](const job::JobIdentity&, const job::PodPlace&, Json* pod) {
    (*pod)["metadata"]["labels"][std::string(kStageRunLabel)] = run_label;
  };
  const StageRunPods run_pods(&c_->children_, task, run_label);
  req.children = &run_pods;
  absl::StatusOr<job::JobResult> result = c_->engine_.Reconcile(req);
  if (!result.ok()) return result.status();
  if (result->requeue_after > absl::ZeroDuration()) Timer(result->requeue_after);
  NoteError(result->sync_error);
  if (result->skipped) {
    facts_.run = stages::RunPhase::kPending;
    return absl::OkStatus();
  }
  if (result->status_changed) {
    run_.status = result->status;
    run_changed_ = true;
  }
  const job::JobStatus& js = run_.status;
  if (js.IsSucceeded()) {
    facts_.run = stages::RunPhase::kSucceeded;
  } else if (js.IsFailed()) {
    facts_.run = stages::RunPhase::kFailed;
    if (const api::Condition* failed = js.FindCondition(job::condition_types::kFailed)) {
      facts_.run_message = failed->message;
    }
  } else {
    auto it = js.replica_statuses.find(task);
    const bool active = it != js.replica_statuses.end() && it->second.active > 0;
    facts_.run = active ? stages::RunPhase::kRunning : stages::RunPhase::kPending;
  }
  // Where the run's pod landed (the scheduler decides for selector placement).
  for (const ObjectPtr& pod : pods_) {
    if (kube::Label(*pod, job::labels::kTaskName).value_or("") != task ||
        kube::Label(*pod, kStageRunLabel).value_or("") != run_label) {
      continue;
    }
    const std::string node = kube::StringAt(*pod, "spec.nodeName");
    if (!node.empty()) stage_nodes_[StageNodeKey(stage)] = node;
  }
  return absl::OkStatus();
}

void StagedJobController::Pass::ObserveInference() {
  WorkerParams params;
  params.worker_type = std::string(kInferenceWorker);
  params.env = BaseWorkerEnv(owner_, kInferenceWorker, c_->context().settings.lc_server);
  if (!c_->kind_->InferenceParams(job_, refs_, model_updates_, &params)) {
    for (const ObjectPtr& pod : pods_) {
      if (kube::Label(*pod, api::LabelKeyWorkerType(owner_.kind)).value_or("") ==
          kInferenceWorker) {
        inference_drop_.push_back(pod);
      }
    }
    return;
  }
  params.host_network = true;
  params.node_name = PinnedNode(job_.deploy_template, refs_.dataset_node);
  absl::StatusOr<std::optional<WorkerS3Options>> s3 =
      StorageOf(params, c_->kind_->InferenceCredential(job_, refs_));
  if (!s3.ok() || !s3->has_value()) {
    // The inference pod waits for its Secret: what runs keeps running, nothing new is made.
    NoteError(s3.status());
    return;
  }
  params.s3 = **std::move(s3);
  absl::StatusOr<Json> tmpl =
      BuildWorkerTemplate(owner_, job_.deploy_template, params, "spec.deploySpec.template");
  if (!tmpl.ok()) {
    // Checked with the spec already; a failure here is a bug or a Model URL gone bad.
    LOG(WARNING) << owner_.kind << " " << key_
                 << ": cannot build the inference pod: " << tmpl.status();
    return;
  }
  if (job_.hot_update) {
    AddHotUpdateVolume(Lower(absl::StrCat(ToAbsl(api::paths::kModelHotUpdateHostPrefix), "/",
                                          owner_.ns, "/", owner_.kind, "/", owner_.name)),
                       &*tmpl);
  }
  // Without hot update a new model means a new pod: the revision is part of what it is built from.
  const int64_t revision = job_.hot_update ? 0 : model_updates_;
  inference_hash_ = ContentHash(Json{{"template", *tmpl}, {"revision", revision}});
  inference_pod_ = *std::move(tmpl);

  for (const ObjectPtr& pod : pods_) {
    if (kube::Label(*pod, api::LabelKeyWorkerType(owner_.kind)).value_or("") != kInferenceWorker) {
      continue;
    }
    if (kube::IsBeingDeleted(*pod)) continue;
    const std::string hash = TemplateHashOf(*pod);
    if (hash != inference_hash_ || Finished(*pod)) {
      inference_drop_.push_back(pod);
    } else {
      inference_keep_.push_back(pod);
    }
  }
  // One worker: keep the newest if several ever exist.
  std::sort(inference_keep_.begin(), inference_keep_.end(),
            [](const ObjectPtr& a, const ObjectPtr& b) {
              return kube::StringAt(*a, "metadata.creationTimestamp") >
                     kube::StringAt(*b, "metadata.creationTimestamp");
            });
  while (inference_keep_.size() > 1) {
    inference_drop_.push_back(inference_keep_.back());
    inference_keep_.pop_back();
  }
  if (!inference_keep_.empty()) {
    const Json& pod = *inference_keep_.front();
    facts_.inference_restarted = PodPhase(pod) == "Running";
    const std::string node = kube::StringAt(pod, "spec.nodeName");
    if (!node.empty()) stage_nodes_[StageNodeKey(stages::kDeploy)] = node;
  }
}

void StagedJobController::Pass::Transitions() {
  // A few steps at most per pass (e.g. Completed -> Waiting); the loop bound is a safety net.
  for (int step = 0; step < 4; ++step) {
    const api::Condition* latest = Latest();
    if (latest != nullptr && latest->type == stages::kCompleted &&
        stages::RunsStagePod(latest->stage)) {
      facts_.output_reported = !OutputModels(ParseStageData(latest->data)).empty();
      const absl::Time since = latest->last_transition_time.value_or(now_);
      facts_.output_grace_over = now_ - since >= c_->options_.output_grace;
      if (!facts_.output_reported && !facts_.output_grace_over) {
        Timer(since + c_->options_.output_grace - now_);
      }
    }
    std::optional<stages::Transition> t = stages::NextTransition(latest, facts_);
    if (!t.has_value()) return;
    api::Condition c;
    c.type = t->type;
    c.stage = t->stage;
    c.reason = t->reason;
    c.message = t->message;
    if (t->keep_data && latest != nullptr) c.data = latest->data;
    if (c.type == stages::kCompleted && c.stage == stages::kTrain) ++rounds_;
    if (c.type == stages::kStarting && stages::RunsStagePod(c.stage)) {
      run_ = StageRun{c.stage, run_.run + 1, {}};
      run_changed_ = true;
      facts_.run = stages::RunPhase::kNotStarted;
    }
    if (stages::RunsStagePod(c.stage) &&
        (c.type == stages::kCompleted || c.type == stages::kFailed)) {
      facts_.run = stages::RunPhase::kNotStarted;
    }
    if (api::AppendCondition(&conditions_, c, now_)) appended_.push_back(conditions_.back());
  }
}

absl::Status StagedJobController::Pass::SyncInference() {
  for (const ObjectPtr& pod : inference_drop_) {
    NoteError(DeletePod(*pod, inference_pod_.has_value() ? "the inference worker is replaced"
                                                         : "no inference worker is wanted"));
  }
  if (!inference_pod_.has_value() || !inference_keep_.empty()) return absl::OkStatus();
  Json pod = BuildWorkerPod(owner_, *inference_pod_, kInferenceWorker);
  pod["metadata"]["annotations"][std::string(kTemplateHashAnnotation)] = inference_hash_;
  c_->expectations_.ExpectCreations(key_, 1);
  absl::StatusOr<Json> created = c_->context().client->Create(kube::resources::Pods(), id_.ns, pod);
  if (!created.ok()) {
    c_->expectations_.CreationObserved(key_);
    Event(kube::EventType::kWarning, job::event_reasons::kFailedCreatePod,
          absl::StrCat("Error creating the inference pod: ", created.status().message()));
    return created.status();
  }
  Event(kube::EventType::kNormal, job::event_reasons::kSuccessfulCreatePod,
        absl::StrCat("Created inference pod: ", kube::Name(*created)));
  return absl::OkStatus();
}

void StagedJobController::Pass::CleanupStagePods() {
  const api::Condition* latest = Latest();
  const bool running = latest != nullptr && stages::RunsStagePod(latest->stage) &&
                       (latest->type == stages::kStarting || latest->type == stages::kRunning);
  const std::string active_task = running ? Lower(latest->stage) : "";
  const std::string active_run = absl::StrCat(run_.run);
  const job::CleanPodPolicy policy =
      job_.run_policy.clean_pod_policy.value_or(job::CleanPodPolicy::kAll);
  for (const ObjectPtr& pod : pods_) {
    const std::string task = kube::Label(*pod, job::labels::kTaskName).value_or("");
    if (task != "train" && task != "eval") continue;
    if (task == active_task) continue;  // The current run (stale pods are RunStage's).
    const bool remove = policy == job::CleanPodPolicy::kAll ||
                        (policy == job::CleanPodPolicy::kRunning && !Finished(*pod));
    if (remove) NoteError(DeletePod(*pod, absl::StrCat("its ", task, " stage is over")));
  }
}

absl::Status StagedJobController::Pass::WriteStatus() {
  Json next = status_;
  PutConditions(conditions_, &next);
  SetSummary(conditions_, &next);
  if (!next.contains("startTime")) next["startTime"] = kube::FormatTimestamp(now_);
  next["rounds"] = rounds_;
  next["observedGeneration"] = kube::Generation(*object_);
  if (run_.run > 0) next[st::kStagePods] = run_.ToJson();
  if (!stage_nodes_.empty()) {
    Json nodes = Json::object();
    for (const auto& [stage, node] : stage_nodes_) nodes[stage] = node;
    next[st::kStageNodes] = std::move(nodes);
  }
  if (credentials_.has_value()) {
    MarkSpecInvalid(&next, credentials_->reason, credentials_->message, now_, st::kSpecValidity);
  } else {
    MarkSpecValid(&next, now_, st::kSpecValidity);
  }
  if (next == status_) return absl::OkStatus();

  const std::vector<api::Condition>& started_from = started_from_;
  absl::StatusOr<StatusWrite> write = gm::WriteStatus(
      *c_->context().client, c_->kind_->resource(), id_.ns, id_.name, id_.uid,
      [&](const Json&, Json* status) -> absl::Status {
        // A report may have changed the history (a new stage, a worker's output) since the cache
        // copy this pass decided from: then decide again from the new state.
        if (ConditionsOf(*status) != started_from) {
          return absl::AbortedError("the stage history changed meanwhile (a report was applied)");
        }
        // Only the fields this pass owns: others (e.g. the knowledge base, written by reports)
        // stay as they are now.
        for (const char* field :
             {"conditions", "stage", "stageState", "startTime", "rounds", "observedGeneration",
              st::kStagePods, st::kStageNodes, st::kJobConditions, st::kReason, st::kMessage}) {
          if (next.contains(field)) {
            (*status)[field] = next[field];
          } else {
            status->erase(field);
          }
        }
        return absl::OkStatus();
      },
      object_, /*max_fresh_attempts=*/1);
  if (!write.ok()) {
    if (write.status().code() == absl::StatusCode::kAborted || kube::IsConflict(write.status())) {
      // The object moved on (a report was applied): its informer event brings the job back, and
      // this pass's decisions are remade from the new state.
      LOG(DEBUG) << c_->kind_->kind() << " " << key_ << ": status not written ("
                 << write.status().message() << "); reconciling again";
      stale_ = true;
      return absl::OkStatus();
    }
    return write.status();
  }
  if (write->written) {
    c_->expectations_.ExpectStatus(key_, kube::ResourceVersion(write->object));
    status_ = write->after;
    for (const api::Condition& c : appended_) {
      LOG(INFO) << c_->kind_->kind() << " " << key_ << ": " << c.type << "(" << c.stage << ")"
                << (c.message.empty() ? "" : ": ") << c.message;
      Event(EventTypeFor(c.type), EventReason(c), c.message);
    }
    if (credentials_.has_value()) {
      AnnounceSpecInvalid(c_->context(), c_->kind_->resource(), *write, credentials_->reason,
                          credentials_->message, st::kSpecValidity);
    }
  }
  return absl::OkStatus();
}

absl::Status StagedJobController::Pass::PlaceOnEdge() {
  c_->RequireModels(key_, job_, refs_, status_);
  return c_->placements_.Sync(key_, c_->EdgeResources(*object_, job_, refs_, status_));
}

}  // namespace nereid::gm
