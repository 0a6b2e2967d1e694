#include "globalmanager/controllers/staged_job_controller.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/api/sedna_contract.h"
#include "common/api/validation.h"
#include "common/job/job_status.h"
#include "common/job/job_validation.h"
#include "common/job/owner_handler.h"
#include "common/job/pod_builder.h"
#include "common/log/log.h"
#include "common/status/macros.h"
#include "common/strings/absl_compat.h"
#include "globalmanager/controllers/edge_dispatcher.h"
#include "globalmanager/controllers/edge_objects.h"
#include "globalmanager/controllers/model_requirements.h"
#include "globalmanager/controllers/placement.h"
#include "globalmanager/controllers/stage_data.h"
#include "globalmanager/controllers/stage_machine.h"
#include "globalmanager/controllers/status_conditions.h"
#include "globalmanager/controllers/status_writer.h"

namespace nereid::gm {
namespace {

using kube::Json;
using kube::ObjectPtr;
namespace v1 = edge::v1;
namespace st = staged_status;

constexpr char kDatasetIndex[] = "staged-datasets";
constexpr char kModelIndex[] = "staged-models";

// Reasons of the SpecValid job condition and the matching Events.
constexpr std::string_view kSpecValid = "SpecValid";
constexpr std::string_view kInvalidSpec = "InvalidSpec";
constexpr std::string_view kDatasetNotFound = "DatasetNotFound";
constexpr std::string_view kModelNotFound = "ModelNotFound";
constexpr std::string_view kValid = "Valid";

std::string Lower(std::string_view s) { return absl::AsciiStrToLower(ToAbsl(s)); }

Json StatusOf(const Json& object) {
  const Json* status = kube::FindPath(object, "status");
  return status != nullptr && status->is_object() ? *status : Json::object();
}

std::vector<api::Condition> ConditionsOf(const Json& status) {
  api::FieldReader reader;  // A malformed history is read as far as it goes.
  return api::ReadConditions(status, "status", &reader);
}

void PutConditions(const std::vector<api::Condition>& conditions, Json* status) {
  Json list = Json::array();
  for (const api::Condition& c : conditions) list.push_back(c.ToJson());
  (*status)["conditions"] = std::move(list);
}

int64_t IntAt(const Json& obj, const char* key) {
  if (!obj.is_object()) return 0;
  auto it = obj.find(key);
  return it != obj.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

// The current stage run, as kept in status.stagePods.
struct StageRun {
  std::string stage;
  int64_t run = 0;
  job::JobStatus status;

  static StageRun From(const Json& status_json) {
    StageRun r;
    const Json* pods = kube::FindPath(status_json, st::kStagePods);
    if (pods == nullptr || !pods->is_object()) return r;
    r.stage = kube::StringAt(*pods, "stage");
    r.run = IntAt(*pods, "run");
    api::FieldReader reader;
    r.status = job::ReadJobStatus(*pods, "status.stagePods", &reader);
    return r;
  }
  Json ToJson() const {
    Json json = status.ToJson();
    if (!json.is_object()) json = Json::object();
    json["stage"] = stage;
    json["run"] = run;
    return json;
  }
};

// The node a stage's pod is pinned to: the template's nodeName, else the dataset's node unless the
// template selects nodes itself (then the scheduler decides: "").
std::string PinnedNode(const api::PodTemplate& pod_template, const std::string& dataset_node) {
  const std::string node = api::TemplateNodeName(pod_template);
  if (!node.empty()) return node;
  const Json* spec = kube::FindPath(pod_template, "spec");
  if (spec != nullptr && SelectsNodes(*spec)) return "";
  return dataset_node;
}

std::string StageNodeKey(std::string_view stage) { return Lower(stage); }

std::string PodPhase(const Json& pod) { return kube::StringAt(pod, "status.phase"); }

bool Finished(const Json& pod) {
  const std::string phase = PodPhase(pod);
  return phase == "Succeeded" || phase == "Failed";
}

}  // namespace

// Filters the job's pods to one stage run for the common job library (which treats every pod it
// is shown as its own). The filter is set per key around the library call; the workqueue never
// runs one key twice at once.
class StagedJobController::StageRunLister final : public job::ChildLister {
 public:
  explicit StageRunLister(const job::ChildLister* all) : all_(all) {}

  void Set(const std::string& key, std::string task, std::string run) {
    absl::MutexLock lock(&mu_);
    filters_[key] = {std::move(task), std::move(run)};
  }
  void Clear(const std::string& key) {
    absl::MutexLock lock(&mu_);
    filters_.erase(key);
  }
  std::vector<ObjectPtr> Pods(const job::JobIdentity& id) const override {
    std::pair<std::string, std::string> filter;
    {
      absl::MutexLock lock(&mu_);
      auto it = filters_.find(id.Key());
      if (it == filters_.end()) return {};
      filter = it->second;
    }
    std::vector<ObjectPtr> out;
    for (const ObjectPtr& pod : all_->Pods(id)) {
      if (kube::Label(*pod, job::labels::kTaskName).value_or("") == filter.first &&
          kube::Label(*pod, kStageRunLabel).value_or("") == filter.second) {
        out.push_back(pod);
      }
    }
    return out;
  }
  std::vector<ObjectPtr> Services(const job::JobIdentity& id) const override {
    return all_->Services(id);
  }

 private:
  const job::ChildLister* const all_;
  mutable absl::Mutex mu_;
  std::map<std::string, std::pair<std::string, std::string>> filters_ ABSL_GUARDED_BY(mu_);
};

namespace {

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
      present = present ||
                kube::StringAt(m, "mountPath") == api::paths::kModelHotUpdateContainerPrefix;
    }
    if (!present) {
      mounts.push_back(
          {{"name", name}, {"mountPath", std::string(api::paths::kModelHotUpdateContainerPrefix)}});
    }
  }
}

// The data of the condition the LC works from while `stage` waits: the previous stage's latest
// Completed condition (Eval needs the trained model, Deploy the eval metrics).
const api::Condition* PreviousStageData(const std::vector<api::Condition>& conditions,
                                        std::string_view stage) {
  std::string_view prev = stage == stages::kEval     ? stages::kTrain
                          : stage == stages::kDeploy ? stages::kEval
                                                     : stages::kDeploy;
  for (auto it = conditions.rbegin(); it != conditions.rend(); ++it) {
    if (it->stage == prev && it->type == stages::kCompleted) return &*it;
    if (it->stage == stage && it->type != stages::kWaiting) break;  // An older round.
  }
  return nullptr;
}

// The url of the latest training output (LifelongLearningJob's CLOUD_KB_INDEX): from the history
// while it holds a completed training round, else what status.lastTrainedModel remembers.
std::string LastTrainOutput(const std::vector<api::Condition>& conditions, const Json& status) {
  for (auto it = conditions.rbegin(); it != conditions.rend(); ++it) {
    if (it->stage != stages::kTrain || it->type != stages::kCompleted) continue;
    std::vector<std::string> urls = ModelUrls(OutputModels(ParseStageData(it->data)));
    if (!urls.empty()) return urls.front();
  }
  return kube::StringAt(status, st::kLastTrainedModel);
}

void SetSummary(const std::vector<api::Condition>& conditions, Json* status) {
  if (conditions.empty()) return;
  (*status)["stage"] = conditions.back().stage;
  (*status)["stageState"] = conditions.back().type;
}

// SpecValid (and other job-level conditions) live in status.jobConditions: status.conditions is
// Sedna's stage history, whose schema allows only stage conditions.
bool SetJobCondition(Json* status, std::string_view type, std::string_view cond_status,
                     std::string_view reason, std::string_view message, absl::Time now) {
  Json holder = Json::object();
  if (status->contains(st::kJobConditions)) holder["conditions"] = (*status)[st::kJobConditions];
  const bool changed = SetStatusCondition(&holder, type, cond_status, reason, message, now);
  if (changed) (*status)[st::kJobConditions] = holder["conditions"];
  return changed;
}

std::optional<api::Condition> FindJobCondition(const Json& status, std::string_view type) {
  const Json* list = kube::FindPath(status, st::kJobConditions);
  if (list == nullptr) return std::nullopt;
  return FindStatusCondition(Json{{"conditions", *list}}, type);
}

kube::EventType EventTypeFor(std::string_view condition_type) {
  return condition_type == stages::kFailed ? kube::EventType::kWarning : kube::EventType::kNormal;
}

std::string EventReason(const api::Condition& c) { return absl::StrCat(c.stage, c.type); }

}  // namespace

// ---------------------------------------------------------------------------------------------
// One reconcile of a runnable job.
class StagedJobController::Pass {
 public:
  Pass(StagedJobController* c, std::string key, ObjectPtr object, StagedJob job, StagedRefs refs)
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
        run_(StageRun::From(status_)) {
    started_from_ = conditions_;
    model_updates_ = IntAt(status_, st::kModelUpdates);
    rounds_ = IntAt(status_, "rounds");
    if (const Json* nodes = kube::FindPath(status_, st::kStageNodes);
        nodes != nullptr && nodes->is_object()) {
      for (const auto& [stage, node] : nodes->items()) {
        if (node.is_string()) stage_nodes_[stage] = node.get<std::string>();
      }
    }
  }

  absl::StatusOr<kube::ReconcileResult> Run();

 private:
  const api::Condition* Latest() const {
    return conditions_.empty() ? nullptr : &conditions_.back();
  }
  void Event(kube::EventType type, std::string_view reason, std::string_view message) {
    if (c_->context().events != nullptr) c_->context().events->Record(*object_, type, reason, message);
  }
  void Timer(absl::Duration d) {
    if (d <= absl::ZeroDuration()) d = absl::Milliseconds(1);
    if (requeue_ == absl::ZeroDuration() || d < requeue_) requeue_ = d;
  }
  void NoteError(const absl::Status& s) {
    if (!s.ok() && error_.ok()) error_ = s;
  }
  absl::Status DeletePod(const Json& pod, std::string_view why);

  absl::Status RunStage();
  void ObserveInference();
  void Transitions();
  absl::Status SyncInference();
  void CleanupStagePods();
  absl::Status WriteStatus();
  absl::Status PlaceOnEdge();

  StagedJobController* const c_;
  const std::string key_;
  const ObjectPtr object_;
  const StagedJob job_;
  const StagedRefs refs_;
  const WorkerOwner owner_;
  const job::JobIdentity id_;
  const absl::Time now_;

  Json status_;
  std::vector<api::Condition> conditions_;
  std::vector<api::Condition> started_from_;  // The history this pass decided from.
  StageRun run_;
  int64_t model_updates_ = 0;
  int64_t rounds_ = 0;
  std::map<std::string, std::string> stage_nodes_;
  std::vector<api::Condition> appended_;  // For Events once written.

  std::vector<ObjectPtr> pods_;
  stages::Facts facts_;
  // The inference pods to keep / whether a new one must be created.
  std::vector<ObjectPtr> inference_keep_;
  std::vector<ObjectPtr> inference_drop_;
  std::optional<Json> inference_pod_;  // desired template, when the worker should run
  std::string inference_hash_;

  absl::Duration requeue_ = absl::ZeroDuration();
  absl::Status error_;
  bool run_changed_ = false;
  bool stale_ = false;  // The status write lost to a newer object.
};

absl::Status StagedJobController::Pass::DeletePod(const Json& pod, std::string_view why) {
  if (kube::IsBeingDeleted(pod)) return absl::OkStatus();
  c_->expectations_.ExpectDeletion(key_, kube::Uid(pod));
  kube::DeleteOptions options;
  options.precondition_uid = kube::Uid(pod);
  absl::Status s =
      c_->context().client->Delete(kube::resources::Pods(), id_.ns, kube::Name(pod), options);
  if (!s.ok()) {
    c_->expectations_.DeletionObserved(key_, kube::Uid(pod));
    if (absl::IsNotFound(s)) return absl::OkStatus();
    Event(kube::EventType::kWarning, "FailedDeletePod",
          absl::StrCat("Error deleting pod ", kube::Name(pod), ": ", s.message()));
    return s;
  }
  LOG(INFO) << c_->kind_->kind() << " " << key_ << ": deleted pod " << kube::Name(pod) << " ("
            << why << ")";
  Event(kube::EventType::kNormal, "SuccessfulDeletePod",
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
  absl::StatusOr<Json> tmpl = BuildWorkerTemplate(
      owner_, user_template, params,
      stage == stages::kTrain ? "spec.trainSpec.template" : "spec.evalSpec.template");
  if (!tmpl.ok()) {
    facts_.run = stages::RunPhase::kFailed;
    facts_.run_message =
        absl::StrCat("cannot build the ", task, " pod from the stage input: ",
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
  c_->run_lister_->Set(key_, task, run_label);
  absl::StatusOr<job::JobResult> result = c_->engine_.Reconcile(req);
  c_->run_lister_->Clear(key_);
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
    if (const job::JobCondition* failed = js.FindCondition(job::condition_types::kFailed)) {
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
  absl::StatusOr<Json> tmpl =
      BuildWorkerTemplate(owner_, job_.deploy_template, params, "spec.deploySpec.template");
  if (!tmpl.ok()) {
    // Checked with the spec already; a failure here is a bug or a Model URL gone bad.
    LOG(WARNING) << owner_.kind << " " << key_ << ": cannot build the inference pod: "
                 << tmpl.status();
    return;
  }
  if (job_.hot_update) {
    AddHotUpdateVolume(
        Lower(absl::StrCat(ToAbsl(api::paths::kModelHotUpdateHostPrefix), "/", owner_.ns, "/",
                           owner_.kind, "/", owner_.name)),
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
  std::sort(inference_keep_.begin(), inference_keep_.end(), [](const ObjectPtr& a, const ObjectPtr& b) {
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
  absl::StatusOr<Json> created =
      c_->context().client->Create(kube::resources::Pods(), id_.ns, pod);
  if (!created.ok()) {
    c_->expectations_.CreationObserved(key_);
    Event(kube::EventType::kWarning, "FailedCreatePod",
          absl::StrCat("Error creating the inference pod: ", created.status().message()));
    return created.status();
  }
  Event(kube::EventType::kNormal, "SuccessfulCreatePod",
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
  if (std::optional<api::Condition> valid = FindJobCondition(next, kSpecValid);
      valid.has_value() && valid->status == condition_status::kFalse) {
    SetJobCondition(&next, kSpecValid, condition_status::kTrue, kValid, "", now_);
    next.erase(st::kReason);
    next.erase(st::kMessage);
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
  }
  return absl::OkStatus();
}

absl::Status StagedJobController::Pass::PlaceOnEdge() {
  c_->RequireModels(key_, job_, refs_, status_);
  return c_->Place(key_, *object_, c_->EdgeResources(*object_, job_, refs_, status_));
}

// ---------------------------------------------------------------------------------------------

absl::StatusOr<std::unique_ptr<StagedJobController>> StagedJobController::Create(
    const ControllerContext& context, std::unique_ptr<StagedKind> kind, StagedJobOptions options) {
  if (context.client == nullptr || context.informers == nullptr || context.edge == nullptr ||
      kind == nullptr) {
    return absl::InvalidArgumentError(
        "StagedJobController: client, informers, edge and a kind are required");
  }
  std::unique_ptr<StagedJobController> c(
      new StagedJobController(context, std::move(kind), std::move(options)));
  kube::Indexers indexers;
  indexers[kDatasetIndex] = [](const Json& job) -> std::vector<std::string> {
    const std::string name = kube::StringAt(job, "spec.dataset.name");
    if (name.empty()) return {};
    return {kube::MakeKey(kube::Namespace(job), name)};
  };
  indexers[kModelIndex] = [](const Json& job) -> std::vector<std::string> {
    std::vector<std::string> keys;
    for (const char* path :
         {"spec.initialModel.name", "spec.deploySpec.model.name", "spec.evalSpec.initialModel.name"}) {
      const std::string name = kube::StringAt(job, path);
      if (!name.empty()) keys.push_back(kube::MakeKey(kube::Namespace(job), name));
    }
    return keys;
  };
  RETURN_IF_ERROR(c->jobs_->AddIndexers(std::move(indexers)));
  auto referrers = [raw = c.get()](const char* index) {
    kube::ResourceEventHandlerFuncs funcs;
    funcs.on_add = [raw, index](const ObjectPtr& obj) { raw->EnqueueReferrers(index, obj); };
    funcs.on_update = [raw, index](const ObjectPtr& old_obj, const ObjectPtr& new_obj) {
      // Spec changes only: Datasets get a status write per count.
      if (kube::Generation(*old_obj) != kube::Generation(*new_obj) ||
          kube::FindPath(*old_obj, "spec") == nullptr ||
          *kube::FindPath(*old_obj, "spec") != *kube::FindPath(*new_obj, "spec")) {
        raw->EnqueueReferrers(index, new_obj);
      }
    };
    funcs.on_delete = [raw, index](const kube::DeletedObject& deleted) {
      if (ObjectPtr obj = kube::LastKnownState(deleted)) raw->EnqueueReferrers(index, obj);
    };
    return funcs;
  };
  c->datasets_->AddEventHandler(referrers(kDatasetIndex));
  c->models_->AddEventHandler(referrers(kModelIndex));
  c->pods_->AddEventHandler(
      job::ObservingOwnerHandler(&c->runner(), std::string(c->kind_->kind()), &c->expectations_));
  c->services_->AddEventHandler(
      job::ObservingOwnerHandler(&c->runner(), std::string(c->kind_->kind()), &c->expectations_));
  if (context.reports != nullptr) {
    RETURN_IF_ERROR(context.reports->Register(std::string(c->kind_->kind()), c.get()));
  }
  return c;
}

StagedJobController::StagedJobController(const ControllerContext& context,
                                         std::unique_ptr<StagedKind> kind, StagedJobOptions options)
    : ReconcilingController(std::string(kind->controller_name()), context),
      kind_(std::move(kind)),
      options_(std::move(options)),
      jobs_(Watch(kind_->resource())),
      pods_(Read(kube::resources::Pods())),
      services_(Read(kube::resources::Services())),
      datasets_(Read(api::resources::Datasets())),
      models_(Read(api::resources::Models())),
      children_(pods_->GetLister(), services_->GetLister()),
      run_lister_(std::make_unique<StageRunLister>(&children_)),
      expectations_(context.clock),
      gang_(context.client, context.clock),
      engine_(context.client, run_lister_.get(), &expectations_, &gang_, context.events,
              context.clock, options_.job) {}

StagedJobController::~StagedJobController() { Stop(); }

std::string StagedJobController::Requester(const std::string& key) const {
  return absl::StrCat(ToAbsl(kind_->kind()), "/", key);
}

std::set<std::string> StagedJobController::PlacedNodes(const std::string& key) const {
  absl::MutexLock lock(&mu_);
  std::set<std::string> nodes;
  auto it = placed_.find(key);
  if (it == placed_.end()) return nodes;
  for (const auto& [node, version] : it->second.versions) nodes.insert(node);
  return nodes;
}

void StagedJobController::EnqueueReferrers(const std::string& index, const ObjectPtr& object) {
  absl::StatusOr<std::vector<ObjectPtr>> jobs =
      jobs_->GetLister().ByIndex(index, kube::Key(*object));
  if (!jobs.ok()) return;
  for (const ObjectPtr& job : *jobs) Enqueue(kube::Key(*job));
}

StagedJob StagedJobController::ParseAndCheck(const Json& object,
                                             std::vector<kube::StatusCause>* causes) const {
  StagedJob job = kind_->Parse(object, causes);
  if (!causes->empty()) return job;
  const WorkerOwner owner = WorkerOwner::FromObject(kind_->kind(), object);
  struct Worker {
    const api::PodTemplate* tmpl;
    std::string_view type;
    std::string field;
  };
  const Worker workers[] = {
      {&job.train_template, "train", "spec.trainSpec.template"},
      {&job.eval_template, "eval", "spec.evalSpec.template"},
      {&job.deploy_template, kInferenceWorker, "spec.deploySpec.template"},
  };
  job::JobSpec library_view;
  library_view.run_policy = job.run_policy;
  for (const Worker& w : workers) {
    WorkerParams params;
    params.worker_type = std::string(w.type);
    std::vector<kube::StatusCause> found = CheckWorkerTemplate(owner, *w.tmpl, params, w.field);
    causes->insert(causes->end(), found.begin(), found.end());
    if (const Json* spec = kube::FindPath(*w.tmpl, "spec")) {
      absl::Status s = ValidateNodeSelection(*spec, absl::StrCat(w.field, ".spec"));
      if (!s.ok()) api::AddInvalid(absl::StrCat(w.field, ".spec"), std::string(s.message()), causes);
    }
    if (w.type != kInferenceWorker) {
      job::Task t;
      t.name = std::string(w.type);
      t.pod_template = *w.tmpl;
      library_view.tasks.push_back(std::move(t));
    }
  }
  // What the common job library would refuse at run time (names, runPolicy bounds).
  std::vector<kube::StatusCause> library = job::ValidateJobSpec(library_view, owner.name);
  for (kube::StatusCause& cause : library) {
    // Tasks are this controller's, not the user's: point at the job instead.
    if (absl::StartsWith(cause.field, "spec.tasks")) cause.field = "metadata.name";
    causes->push_back(std::move(cause));
  }
  if (job.run_policy.ttl_seconds_after_finished.has_value()) {
    api::AddInvalid("spec.runPolicy.ttlSecondsAfterFinished",
                    absl::StrCat("not supported: an ", ToAbsl(kind_->kind()),
                                 " never finishes (it loops Train -> Eval -> Deploy)"),
                    causes);
  }
  return job;
}

bool StagedJobController::Resolve(const StagedJob& job, StagedRefs* refs, std::string* reason,
                                  std::string* message) const {
  const std::string ns = job.meta.ns;
  absl::StatusOr<ObjectPtr> dataset =
      datasets_->GetLister().GetByKey(kube::MakeKey(ns, job.dataset.name));
  if (!dataset.ok()) {
    *reason = std::string(kDatasetNotFound);
    *message = absl::StrCat("waiting for Dataset ", job.dataset.name, " in namespace ", ns);
    return false;
  }
  refs->dataset_node = kube::StringAt(**dataset, "spec.nodeName");
  refs->dataset_url = kube::StringAt(**dataset, "spec.url");
  refs->dataset_format = kube::StringAt(**dataset, "spec.format");
  if (refs->dataset_node.empty()) {
    *reason = std::string(kDatasetNotFound);
    *message = absl::StrCat("Dataset ", job.dataset.name, " has no spec.nodeName");
    return false;
  }
  for (const std::string& name : job.ModelNames()) {
    absl::StatusOr<ObjectPtr> model = models_->GetLister().GetByKey(kube::MakeKey(ns, name));
    if (!model.ok()) {
      *reason = std::string(kModelNotFound);
      *message = absl::StrCat("waiting for Model ", name, " in namespace ", ns);
      return false;
    }
    refs->models[name] = ModelRef{kube::StringAt(**model, "spec.url"),
                                  kube::StringAt(**model, "spec.format")};
  }
  return true;
}

std::map<std::string, v1::Resource> StagedJobController::EdgeResources(
    const Json& object, const StagedJob& job, const StagedRefs& refs, const Json& status) const {
  std::map<std::string, std::string> recorded;
  if (const Json* nodes = kube::FindPath(status, st::kStageNodes); nodes && nodes->is_object()) {
    for (const auto& [stage, node] : nodes->items()) {
      if (node.is_string()) recorded[stage] = node.get<std::string>();
    }
  }
  auto node_of = [&](std::string_view stage, const api::PodTemplate& tmpl) {
    std::string pinned = PinnedNode(tmpl, refs.dataset_node);
    if (!pinned.empty()) return pinned;
    auto it = recorded.find(StageNodeKey(stage));
    return it == recorded.end() ? std::string() : it->second;
  };
  v1::StageNodes nodes;
  nodes.set_train(node_of(stages::kTrain, job.train_template));
  nodes.set_eval(node_of(stages::kEval, job.eval_template));
  nodes.set_deploy(node_of(stages::kDeploy, job.deploy_template));

  const std::vector<api::Condition> conditions = ConditionsOf(status);
  v1::JobStage current;
  if (!conditions.empty()) {
    const api::Condition& latest = conditions.back();
    current.set_stage(latest.stage);
    current.set_type(latest.type);
    const api::Condition* source =
        latest.type == stages::kWaiting ? PreviousStageData(conditions, latest.stage) : &latest;
    if (source != nullptr) {
      const Json data = ParseStageData(source->data);
      if (data.contains("input")) InputToProto(data["input"], current.mutable_input());
      if (data.contains("output")) OutputToProto(data["output"], current.mutable_output());
    }
  }
  v1::Resource resource;
  *resource.mutable_ref() = EdgeRef(kind_->kind(), object);
  kind_->FillEdgeSpec(job, nodes, current, &resource);
  resource.set_version(EdgeVersion(object, resource));

  std::map<std::string, v1::Resource> out;
  for (const std::string& node :
       {refs.dataset_node, nodes.train(), nodes.eval(), nodes.deploy()}) {
    if (!node.empty()) out[node] = resource;
  }
  return out;
}

void StagedJobController::RequireModels(const std::string& key, const StagedJob& job,
                                        const StagedRefs& refs, const Json& status) {
  if (context().models == nullptr) return;
  std::map<std::string, std::string> recorded;
  if (const Json* nodes = kube::FindPath(status, st::kStageNodes); nodes && nodes->is_object()) {
    for (const auto& [stage, node] : nodes->items()) {
      if (node.is_string()) recorded[stage] = node.get<std::string>();
    }
  }
  auto node_of = [&](std::string_view stage, const api::PodTemplate& tmpl) {
    std::string pinned = PinnedNode(tmpl, refs.dataset_node);
    return pinned.empty() ? recorded[StageNodeKey(stage)] : pinned;
  };
  const std::string train = node_of(stages::kTrain, job.train_template);
  const std::string eval = node_of(stages::kEval, job.eval_template);
  const std::string deploy = node_of(stages::kDeploy, job.deploy_template);
  std::vector<ModelNeed> needs;
  auto need = [&](const std::string& model, std::initializer_list<std::string> nodes) {
    if (model.empty()) return;
    for (const std::string& node : nodes) {
      if (!node.empty()) needs.push_back({kube::MakeKey(job.meta.ns, model), node});
    }
  };
  need(job.initial_model, {refs.dataset_node, train});
  need(job.deploy_model, {refs.dataset_node, eval, deploy});
  need(job.initial_eval_model, {refs.dataset_node, eval});
  std::sort(needs.begin(), needs.end());
  needs.erase(std::unique(needs.begin(), needs.end()), needs.end());
  context().models->SetRequirements(Requester(key), needs);
}

absl::Status StagedJobController::Place(const std::string& key, const Json& object,
                                        const std::map<std::string, v1::Resource>& resources) {
  absl::MutexLock lock(&mu_);
  Placed& placed = placed_[key];
  const std::string uid = kube::Uid(object);
  if (placed.uid != uid) {
    // A re-created job: the old one's nodes drop it (same name, so the Upserts replace it anyway).
    placed.uid = uid;
  }
  placed.ref = EdgeRef(kind_->kind(), object);
  for (auto it = placed.versions.begin(); it != placed.versions.end();) {
    if (resources.count(it->first) > 0) {
      ++it;
      continue;
    }
    RETURN_IF_ERROR(context().edge->Remove(it->first, placed.ref));
    LOG(INFO) << kind_->kind() << " " << key << ": withdrawn from node " << it->first;
    it = placed.versions.erase(it);
  }
  for (const auto& [node, resource] : resources) {
    auto it = placed.versions.find(node);
    if (it != placed.versions.end() && it->second == resource.version()) continue;
    RETURN_IF_ERROR(context().edge->Upsert(node, resource));
    LOG(DEBUG) << kind_->kind() << " " << key << ": sent to node " << node << " (version "
               << resource.version() << ")";
    placed.versions[node] = resource.version();
  }
  return absl::OkStatus();
}

absl::Status StagedJobController::Unplace(const std::string& key) {
  absl::MutexLock lock(&mu_);
  auto it = placed_.find(key);
  if (it == placed_.end()) return absl::OkStatus();
  for (const auto& [node, version] : it->second.versions) {
    RETURN_IF_ERROR(context().edge->Remove(node, it->second.ref));
    LOG(INFO) << kind_->kind() << " " << key << ": withdrawn from node " << node;
  }
  placed_.erase(it);
  return absl::OkStatus();
}

absl::Status StagedJobController::Forget(const std::string& key) {
  RETURN_IF_ERROR(Unplace(key));
  if (context().models != nullptr) context().models->ReleaseAll(Requester(key));
  expectations_.Delete(key);
  return absl::OkStatus();
}

absl::Status StagedJobController::RecordNotRunnable(const std::string& key,
                                                    const ObjectPtr& object,
                                                    std::string_view reason,
                                                    const std::string& message) {
  // Nothing of a job that cannot run reaches the edge; its pods are left as they are (a fixed
  // spec picks them up again).
  RETURN_IF_ERROR(Unplace(key));
  if (context().models != nullptr) context().models->ReleaseAll(Requester(key));
  const absl::Time now = context().clock->Now();
  absl::StatusOr<StatusWrite> write = WriteStatus(
      *context().client, kind_->resource(), kube::Namespace(*object), kube::Name(*object),
      kube::Uid(*object),
      [&](const Json& current, Json* status) -> absl::Status {
        SetJobCondition(status, kSpecValid, condition_status::kFalse, reason, message, now);
        (*status)[st::kReason] = reason;
        (*status)[st::kMessage] = message;
        (*status)["observedGeneration"] = kube::Generation(current);
        return absl::OkStatus();
      },
      object, /*max_fresh_attempts=*/3);
  if (!write.ok()) {
    if (absl::IsNotFound(write.status())) return absl::OkStatus();
    return write.status();
  }
  if (write->written) {
    std::optional<api::Condition> before = FindJobCondition(write->before, kSpecValid);
    if (!before.has_value() || before->status != condition_status::kFalse ||
        before->reason != reason || before->message != message) {
      LOG(WARNING) << kind_->kind() << " " << key << ": " << reason << ": " << message;
      if (context().events != nullptr) {
        context().events->Record(write->object, kube::EventType::kWarning, reason, message);
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<kube::ReconcileResult> StagedJobController::Reconcile(const std::string& key) {
  absl::StatusOr<ObjectPtr> object = jobs_->GetLister().GetByKey(key);
  if (!object.ok()) {
    if (!absl::IsNotFound(object.status())) return object.status();
    RETURN_IF_ERROR(Forget(key));
    return kube::ReconcileResult{};
  }
  if (kube::IsBeingDeleted(**object)) {
    RETURN_IF_ERROR(Forget(key));
    return kube::ReconcileResult{};
  }
  std::vector<kube::StatusCause> causes;
  StagedJob job = ParseAndCheck(**object, &causes);
  if (!causes.empty()) {
    RETURN_IF_ERROR(RecordNotRunnable(key, *object, kInvalidSpec, api::FormatCauses(causes)));
    return kube::ReconcileResult{};
  }
  StagedRefs refs;
  std::string reason;
  std::string message;
  if (!Resolve(job, &refs, &reason, &message)) {
    RETURN_IF_ERROR(RecordNotRunnable(key, *object, reason, message));
    return kube::ReconcileResult{};
  }
  if (!expectations_.Satisfied(key, kube::ResourceVersion(**object))) {
    LOG(DEBUG) << kind_->kind() << " " << key << ": waiting for the caches to catch up";
    return kube::ReconcileResult{.requeue_after = expectations_.TimeToExpiry(key)};
  }
  Pass pass(this, key, *object, std::move(job), std::move(refs));
  return pass.Run();
}

absl::Status StagedJobController::PrimeEdge() {
  int placed = 0;
  for (const ObjectPtr& object : jobs_->GetLister().List()) {
    if (kube::IsBeingDeleted(*object)) continue;
    std::vector<kube::StatusCause> causes;
    StagedJob job = ParseAndCheck(*object, &causes);
    if (!causes.empty()) continue;
    StagedRefs refs;
    std::string reason;
    std::string message;
    if (!Resolve(job, &refs, &reason, &message)) continue;
    const Json status = StatusOf(*object);
    const std::string key = kube::Key(*object);
    RequireModels(key, job, refs, status);
    RETURN_IF_ERROR(Place(key, *object, EdgeResources(*object, job, refs, status)));
    ++placed;
  }
  LOG(INFO) << kind_->controller_name() << " controller: " << placed << " jobs in the edge registry";
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------------
// Reports.

ReportOutcome StagedJobController::HandleReport(std::string_view node,
                                                const v1::StatusReport& report) {
  const v1::ObjectRef& ref = report.ref();
  const std::string key = kube::MakeKey(ref.namespace_(), ref.name());
  if (ref.kind() != kind_->kind()) {
    return ReportOutcome::Rejected("Invalid", absl::StrCat("report ", report.seq(), " about ",
                                                           ref.kind(), " ", key, " is not about an ",
                                                           ToAbsl(kind_->kind())));
  }
  ObjectPtr cached;
  if (absl::StatusOr<ObjectPtr> hit = jobs_->GetLister().GetByKey(key); hit.ok()) {
    cached = *std::move(hit);
  }
  if (report.has_trigger()) return HandleTrigger(node, report, cached);
  if (report.has_worker()) return HandleWorker(node, report, cached);
  return ReportOutcome::Rejected(
      "Invalid", absl::StrCat("report ", report.seq(), " about ", ToAbsl(kind_->kind()), " ", key,
                              " carries neither a trigger event nor a worker report"));
}

namespace {

ReportOutcome WriteFailure(std::string_view kind, const std::string& key, std::string_view node,
                           const v1::StatusReport& report, const absl::Status& s) {
  if (absl::IsNotFound(s)) return ReportOutcome::Rejected("ObjectGone", std::string(s.message()));
  if (s.code() == absl::StatusCode::kFailedPrecondition) {
    LOG(WARNING) << kind << " " << key << ": report " << report.seq() << " from node " << node
                 << " refused: " << s.message();
    return ReportOutcome::Rejected("NotThisNode", std::string(s.message()));
  }
  LOG(WARNING) << kind << " " << key << ": report " << report.seq() << " from node " << node
               << " not written: " << s;
  return ReportOutcome::Retry(kube::IsConflict(s) ? "Conflict" : "ApiError",
                              std::string(s.message()));
}

}  // namespace

ReportOutcome StagedJobController::HandleTrigger(std::string_view node,
                                                 const v1::StatusReport& report,
                                                 const ObjectPtr& cached) {
  const v1::ObjectRef& ref = report.ref();
  const std::string key = kube::MakeKey(ref.namespace_(), ref.name());
  const v1::TriggerEvent& event = report.trigger();
  const absl::Time now = context().clock->Now();
  std::string ignored;
  std::optional<api::Condition> appended;
  absl::StatusOr<StatusWrite> write = WriteStatus(
      *context().client, kind_->resource(), ref.namespace_(), ref.name(), ref.uid(),
      [&](const Json& object, Json* status) -> absl::Status {
        ignored.clear();
        appended.reset();
        std::vector<api::Condition> conditions = ConditionsOf(*status);
        const api::Condition* latest = conditions.empty() ? nullptr : &conditions.back();
        const bool hot_update = kube::FindPath(object, "spec.deploySpec.model.hotUpdateEnabled") !=
                                    nullptr &&
                                *kube::FindPath(object, "spec.deploySpec.model.hotUpdateEnabled") ==
                                    true;
        stages::StageReportOutcome outcome =
            stages::OnStageReport(latest, event.stage(), event.status(), event.reason(), hot_update);
        if (!outcome.transition.has_value()) {
          ignored = outcome.ignored;
          return absl::OkStatus();
        }
        // Who may say what: the dataset's node runs the triggers, the deploy node installs.
        const std::string dataset = kube::StringAt(object, "spec.dataset.name");
        std::string dataset_node;
        if (absl::StatusOr<ObjectPtr> ds =
                datasets_->GetLister().GetByKey(kube::MakeKey(ref.namespace_(), dataset));
            ds.ok()) {
          dataset_node = kube::StringAt(**ds, "spec.nodeName");
        }
        std::string deploy_node = kube::StringAt(*status, "stageNodes.deploy");
        if (deploy_node.empty()) {
          deploy_node = PinnedNode(
              kube::FindPath(object, "spec.deploySpec.template") != nullptr
                  ? *kube::FindPath(object, "spec.deploySpec.template")
                  : Json(),
              dataset_node);
        }
        const bool from_deploy_node =
            event.status() == stages::report_status::kInstalled ||
            (event.status() == stages::report_status::kFailed && latest->type == stages::kStarting);
        const std::string& expected = from_deploy_node ? deploy_node : dataset_node;
        if (!expected.empty() && expected != node) {
          return absl::FailedPreconditionError(absl::StrCat(
              event.status(), " of ", event.stage(), " comes from the ",
              from_deploy_node ? "deploy" : "dataset's", " node ", expected, ", not ",
              ToAbsl(node)));
        }
        const stages::Transition& t = *outcome.transition;
        api::Condition c;
        c.type = t.type;
        c.stage = t.stage;
        c.reason = t.reason;
        c.message = t.message;
        if (event.status() == stages::report_status::kReady) {
          c.data = DumpStageData(Json{{"input", InputFromProto(event.input())}});
        } else if (t.keep_data && latest != nullptr) {
          c.data = latest->data;
        }
        if (!api::AppendCondition(&conditions, c, now)) return absl::OkStatus();
        appended = conditions.back();
        PutConditions(conditions, status);
        SetSummary(conditions, status);
        if (event.status() == stages::report_status::kInstalled) {
          (*status)[st::kModelUpdates] = IntAt(*status, st::kModelUpdates) + 1;
        }
        return absl::OkStatus();
      },
      cached);
  if (!write.ok()) return WriteFailure(kind_->kind(), key, node, report, write.status());
  if (!ignored.empty()) {
    LOG(DEBUG) << kind_->kind() << " " << key << ": " << event.status() << " of "
               << event.stage() << " from node " << node << " ignored: " << ignored;
    return ReportOutcome::Accepted();
  }
  if (write->written && appended.has_value()) {
    LOG(INFO) << kind_->kind() << " " << key << ": " << appended->type << "(" << appended->stage
              << ") reported by node " << node << ": " << appended->message;
    if (context().events != nullptr) {
      context().events->Record(write->object, EventTypeFor(appended->type),
                               EventReason(*appended), appended->message);
    }
  }
  return ReportOutcome::Accepted();
}

ReportOutcome StagedJobController::HandleWorker(std::string_view node,
                                                const v1::StatusReport& report,
                                                const ObjectPtr& cached) {
  const v1::ObjectRef& ref = report.ref();
  const std::string key = kube::MakeKey(ref.namespace_(), ref.name());
  const v1::WorkerReport& worker = report.worker();
  const std::string worker_kind = Lower(worker.worker_kind());
  std::string stage;
  if (worker_kind == "train") stage = std::string(stages::kTrain);
  if (worker_kind == "eval") stage = std::string(stages::kEval);
  if (stage.empty()) return ReportOutcome::Accepted();  // The inference worker's: nothing to do.
  std::optional<Json> models = ModelsFromResults(worker.results_json());
  if (!models.has_value()) {
    return ReportOutcome::Rejected(
        "Invalid", absl::StrCat("the ", worker_kind, " worker ", worker.worker_name(),
                                " reported results that are not a JSON array"));
  }
  if (models->empty()) return ReportOutcome::Accepted();
  const absl::Time now = context().clock->Now();
  bool attached = false;
  absl::StatusOr<StatusWrite> write = WriteStatus(
      *context().client, kind_->resource(), ref.namespace_(), ref.name(), ref.uid(),
      [&](const Json&, Json* status) -> absl::Status {
        attached = false;
        std::vector<api::Condition> conditions = ConditionsOf(*status);
        // The output belongs to the latest condition of its stage, if that one is the run (a
        // Waiting or Ready one is a newer round that has not started).
        for (auto it = conditions.rbegin(); it != conditions.rend(); ++it) {
          if (it->stage != stage) continue;
          if (it->type != stages::kStarting && it->type != stages::kRunning &&
              it->type != stages::kCompleted) {
            break;
          }
          Json data = ParseStageData(it->data);
          data["output"] = Json{{"models", *models}};
          std::string dumped = DumpStageData(data);
          if (dumped != it->data) {
            it->data = std::move(dumped);
            it->last_heartbeat_time = now;
            attached = true;
          }
          break;
        }
        if (attached) PutConditions(conditions, status);
        if (attached && stage == stages::kTrain) {
          // The history is bounded; the latest trained model is needed rounds later (LL).
          std::vector<std::string> urls = ModelUrls(*models);
          if (!urls.empty()) (*status)[st::kLastTrainedModel] = urls.front();
        }
        kind_->OnOutputModels(*models, status);
        return absl::OkStatus();
      },
      cached);
  if (!write.ok()) return WriteFailure(kind_->kind(), key, node, report, write.status());
  if (attached) {
    LOG(INFO) << kind_->kind() << " " << key << ": " << models->size() << " output model(s) of the "
              << worker_kind << " worker " << worker.worker_name() << " recorded";
    Enqueue(key);  // A Completed stage may have been waiting for them.
  }
  return ReportOutcome::Accepted();
}

}  // namespace nereid::gm
