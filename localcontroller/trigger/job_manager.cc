#include "localcontroller/trigger/job_manager.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/log/log.h"
#include "common/net/edge_protocol.h"
#include "common/status/macros.h"
#include "localcontroller/cloudlink/lc_db_adapter.h"

namespace nereid::lc::trigger {
namespace {

namespace v1 = edge::v1;
using Json = nlohmann::json;

constexpr char kKindIl[] = "IncrementalLearningJob";
constexpr char kKindLl[] = "LifelongLearningJob";
constexpr char kTrain[] = "Train";
constexpr char kEval[] = "Eval";
constexpr char kDeploy[] = "Deploy";
constexpr char kWaiting[] = "Waiting";
constexpr char kStarting[] = "Starting";
constexpr char kHotUpdateHostPrefix[] = "/var/lib/sedna/model-hot-update";
constexpr char kHotUpdateFile[] = "model_config.json";
// A report whose condition the GM never moved past (lost while the LC was down, coalesced pushes)
// is sent again after this long; the GM ignores a repeated report.
constexpr absl::Duration kResendAfter = absl::Minutes(5);
// When the database or the dataset count is not available yet.
constexpr absl::Duration kRetry = absl::Seconds(5);

std::string Condition(const v1::JobStage& stage) {
  return absl::StrCat(stage.stage(), ":", stage.type());
}

bool IsLocalPath(const std::string& url) { return absl::StartsWith(url, "/"); }

std::string JoinPath(std::string_view a, std::string_view b) {
  std::string out(a);
  while (!out.empty() && out.back() == '/') out.pop_back();
  return absl::StrCat(out, "/", std::string(b));
}

Json StateToJson(const JobState& s, const std::string& last_event, absl::Time reported_at) {
  return Json{{"uid", s.uid},
              {"rounds", s.rounds},
              {"consumed", s.consumed},
              {"reported", s.reported},
              {"lastDataURL", s.last_data_url},
              {"lastEvent", last_event},
              {"reportedAt", absl::ToUnixSeconds(reported_at)}};
}

}  // namespace

struct JobManager::Job {
  v1::ObjectRef ref;
  std::string version;
  bool lifelong = false;
  std::string dataset_name;
  double train_prob = 1.0;
  std::optional<Trigger> train_trigger;
  std::optional<Trigger> deploy_trigger;
  std::string trigger_error;
  std::string initial_model;
  std::string deploy_model;
  std::string initial_eval_model;
  bool hot_update = false;
  std::string output_dir;
  v1::StageNodes nodes;
  v1::JobStage current;

  bool loaded = false;
  JobState state;
  std::string last_event;  // base64 of the last TriggerEvent sent, for a resend
  absl::Time reported_at = absl::InfinitePast();
  absl::Time next_check = absl::InfinitePast();
};

std::string JobKey(const v1::ObjectRef& ref) {
  return absl::StrCat(ref.kind(), "/", ref.namespace_(), "/", ref.name());
}

std::string JobStateMetaKey(const v1::ObjectRef& ref) {
  return absl::StrCat("lcjob/", JobKey(ref));
}

absl::Status WriteFileAtomically(const std::string& path, const std::string& contents) {
  std::error_code ec;
  const std::filesystem::path target(path);
  std::filesystem::create_directories(target.parent_path(), ec);
  if (ec) {
    return absl::InternalError(
        absl::StrCat("creating ", target.parent_path().string(), ": ", ec.message()));
  }
  const std::string tmp = absl::StrCat(path, ".tmp");
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << contents;
    out.flush();
    if (!out) return absl::InternalError(absl::StrCat("writing ", tmp));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return absl::InternalError(absl::StrCat("renaming ", tmp, " to ", path));
  }
  return absl::OkStatus();
}

JobManager::JobManager(Options options)
    : options_(std::move(options)), steps_(options_.clock) {}

JobManager::~JobManager() { Stop(); }

void JobManager::Apply(const v1::Resource& resource) {
  Job parsed;
  parsed.ref = resource.ref();
  parsed.version = resource.version();
  if (resource.has_incremental_learning_job()) {
    const v1::IncrementalLearningJobSpec& s = resource.incremental_learning_job();
    parsed.dataset_name = s.dataset().name();
    parsed.train_prob = s.dataset().train_prob();
    parsed.initial_model = s.initial_model_name();
    parsed.deploy_model = s.deploy_model_name();
    parsed.initial_eval_model = s.initial_eval_model_name();
    parsed.hot_update = s.hot_update_enabled();
    parsed.output_dir = s.output_dir();
    parsed.nodes = s.stage_nodes();
    parsed.current = s.current();
    absl::StatusOr<Trigger> train = Trigger::FromProto(s.train_trigger());
    if (train.ok())
      parsed.train_trigger = *std::move(train);
    else
      parsed.trigger_error = absl::StrCat("trainSpec.trigger: ", train.status().message());
    if (s.has_deploy_trigger()) {
      absl::StatusOr<Trigger> deploy = Trigger::FromProto(s.deploy_trigger());
      if (deploy.ok())
        parsed.deploy_trigger = *std::move(deploy);
      else
        parsed.trigger_error = absl::StrCat("deploySpec.trigger: ", deploy.status().message());
    }
  } else if (resource.has_lifelong_learning_job()) {
    const v1::LifelongLearningJobSpec& s = resource.lifelong_learning_job();
    parsed.lifelong = true;
    parsed.dataset_name = s.dataset().name();
    parsed.train_prob = s.dataset().train_prob();
    parsed.output_dir = s.output_dir();
    parsed.nodes = s.stage_nodes();
    parsed.current = s.current();
    absl::StatusOr<Trigger> train = Trigger::FromProto(s.train_trigger());
    if (train.ok())
      parsed.train_trigger = *std::move(train);
    else
      parsed.trigger_error = absl::StrCat("trainSpec.trigger: ", train.status().message());
  } else {
    LOG(WARNING) << "job manager: " << JobKey(resource.ref())
                 << " carries no incremental/lifelong learning job spec; ignored";
    return;
  }
  if (!(parsed.train_prob > 0 && parsed.train_prob <= 1)) parsed.train_prob = 1.0;
  if (!parsed.trigger_error.empty()) {
    // The GM validates triggers; an LC that cannot parse one (a newer GM) says so and never fires.
    LOG(ERROR) << "job manager: " << JobKey(parsed.ref) << ": " << parsed.trigger_error;
  }
  const std::string key = JobKey(parsed.ref);
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(key);
  if (it != jobs_.end() && it->second.ref.uid() == parsed.ref.uid()) {
    Job& old = it->second;
    parsed.loaded = old.loaded;
    parsed.state = old.state;
    parsed.last_event = old.last_event;
    parsed.reported_at = old.reported_at;
    // A new condition is looked at at once; the same one keeps its trigger period.
    parsed.next_check =
        Condition(old.current) == Condition(parsed.current) ? old.next_check : absl::InfinitePast();
  }
  jobs_[key] = std::move(parsed);
  wake_ = true;
}

void JobManager::Forget(const v1::ObjectRef& ref) {
  {
    absl::MutexLock lock(&mu_);
    jobs_.erase(JobKey(ref));
  }
  absl::Status s = options_.db->Write([&](db::LcDatabase::Tables& tables) -> absl::Status {
    return tables.meta.Erase(JobStateMetaKey(ref));
  });
  if (!s.ok()) LOG(WARNING) << "job manager: " << JobKey(ref) << ": dropping its state: " << s;
}

void JobManager::Start() {
  absl::MutexLock lock(&mu_);
  if (thread_.joinable() || stopping_) return;
  thread_ = std::thread([this] {
    absl::MutexLock lock(&mu_);
    while (!stopping_) {
      wake_ = false;
      const absl::Time next = PollLocked();
      steps_.AwaitUntil(&mu_,
                        absl::Condition(
                            +[](JobManager* m) ABSL_EXCLUSIVE_LOCKS_REQUIRED(m->mu_) {
                              return m->wake_ || m->stopping_;
                            },
                            this),
                        next);
    }
  });
}

void JobManager::Stop() {
  std::thread thread;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    thread = std::move(thread_);
  }
  if (thread.joinable()) thread.join();
}

absl::Time JobManager::Poll() {
  absl::MutexLock lock(&mu_);
  return PollLocked();
}

std::optional<JobState> JobManager::State(const std::string& job_key) const {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(job_key);
  if (it == jobs_.end() || !it->second.loaded) return std::nullopt;
  return it->second.state;
}

size_t JobManager::size() const {
  absl::MutexLock lock(&mu_);
  return jobs_.size();
}

absl::Time JobManager::PollLocked() {
  const absl::Time now = options_.clock->Now();
  if (const absl::Duration back = steps_.BackwardStep(); back > absl::ZeroDuration()) {
    // Without this a check due in a minute would wait for the step to be lived again, and a
    // report in flight would not be resent for as long.
    LOG(WARNING) << "job manager: the clock went back " << back << "; rescheduling checks";
    for (auto& [key, job] : jobs_) {
      job.next_check -= back;
      job.reported_at -= back;
    }
  }
  absl::Time next = absl::InfiniteFuture();
  for (auto& [key, job] : jobs_) {
    if (job.next_check <= now) Evaluate(job, now);
    next = std::min(next, job.next_check);
  }
  return next;
}

absl::Status JobManager::LoadState(Job& job) {
  std::optional<std::string> stored;
  RETURN_IF_ERROR(options_.db->Read([&](db::LcDatabase::Tables& tables) -> absl::Status {
    ASSIGN_OR_RETURN(stored, tables.meta.Get(JobStateMetaKey(job.ref)));
    return absl::OkStatus();
  }));
  job.state = JobState{};
  job.state.uid = job.ref.uid();
  job.last_event.clear();
  job.reported_at = absl::InfinitePast();
  if (stored.has_value()) {
    Json j = Json::parse(*stored, nullptr, /*allow_exceptions=*/false);
    if (j.is_object() && j.value("uid", std::string()) == job.ref.uid()) {
      job.state.rounds = j.value("rounds", int64_t{0});
      job.state.consumed = j.value("consumed", uint64_t{0});
      job.state.reported = j.value("reported", std::string());
      job.state.last_data_url = j.value("lastDataURL", std::string());
      job.last_event = j.value("lastEvent", std::string());
      job.reported_at = absl::FromUnixSeconds(j.value("reportedAt", int64_t{0}));
      LOG(INFO) << "job manager: " << JobKey(job.ref) << ": resumed at round " << job.state.rounds
                << " (" << job.state.consumed << " samples consumed)";
    } else if (!j.is_object()) {
      LOG(WARNING) << "job manager: " << JobKey(job.ref) << ": unreadable stored state; starting "
                   << "afresh";
    }
    // Another uid: a re-created job starts afresh.
  }
  job.loaded = true;
  return absl::OkStatus();
}

bool JobManager::HoldsDataset(const Job& job) const {
  absl::StatusOr<db::DesiredObject> ds =
      options_.db->Get(db::ObjectRef{db::kDatasetKind, job.ref.namespace_(), job.dataset_name, ""});
  return ds.ok();
}

std::optional<std::string> JobManager::DatasetUrl(const Job& job) const {
  absl::StatusOr<db::DesiredObject> ds =
      options_.db->Get(db::ObjectRef{db::kDatasetKind, job.ref.namespace_(), job.dataset_name, ""});
  if (!ds.ok()) return std::nullopt;
  absl::StatusOr<v1::Resource> resource = DecodeDesiredObject(*ds);
  if (!resource.ok() || !resource->has_dataset()) return std::nullopt;
  return resource->dataset().url();
}

std::optional<std::string> JobManager::ModelUrl(const std::string& ns,
                                                const std::string& name) const {
  if (name.empty()) return std::nullopt;
  absl::StatusOr<db::DesiredObject> model = options_.db->Get(db::ObjectRef{"Model", ns, name, ""});
  if (!model.ok()) return std::nullopt;
  absl::StatusOr<v1::Resource> resource = DecodeDesiredObject(*model);
  if (!resource.ok() || !resource->has_model()) return std::nullopt;
  return resource->model().url();
}

std::string JobManager::HostPath(const std::string& path) const {
  if (options_.host_root.empty() || options_.host_root == "/") return path;
  return JoinPath(options_.host_root, path.substr(path.find_first_not_of('/')));
}

void JobManager::Evaluate(Job& job, absl::Time now) {
  job.next_check = absl::InfiniteFuture();
  if (!job.loaded) {
    absl::Status s = LoadState(job);
    if (!s.ok()) {
      LOG(WARNING) << "job manager: " << JobKey(job.ref) << ": reading its state: " << s;
      job.next_check = now + kRetry;
      return;
    }
  }
  const std::string condition = Condition(job.current);
  if (!job.state.reported.empty() && job.state.reported != condition) {
    job.state.reported.clear();  // The GM moved on; persisted with the next report.
  }
  if (!job.state.reported.empty()) {
    // Reported, and the GM has not moved past that condition yet.
    if (now - job.reported_at < kResendAfter) {
      job.next_check = job.reported_at + kResendAfter;
      return;
    }
    std::string bytes;
    v1::TriggerEvent event;
    if (absl::Base64Unescape(job.last_event, &bytes) && event.ParseFromString(bytes)) {
      LOG(INFO) << "job manager: " << JobKey(job.ref) << ": " << event.status() << "("
                << event.stage() << ") not acted on for " << kResendAfter << "; sending it again";
      JobState next = job.state;
      if (!Report(job, event, next).ok()) job.next_check = now + kRetry;
      return;
    }
    job.state.reported.clear();
  }
  const std::string& stage = job.current.stage();
  const std::string& type = job.current.type();
  if (type == kWaiting && stage == kTrain) return EvaluateTrain(job, now);
  if (type == kWaiting && stage == kEval) return ReadyEval(job, now);
  if (type == kWaiting && stage == kDeploy) return EvaluateDeploy(job, now);
  if (type == kStarting && stage == kDeploy) return InstallDeploy(job, now);
}

absl::Status JobManager::Report(Job& job, v1::TriggerEvent event, const JobState& next) {
  *event.mutable_time() = net::ToProtoTime(options_.clock->Now());
  v1::StatusReport report;
  *report.mutable_ref() = job.ref;
  *report.mutable_trigger() = event;
  JobState state = next;
  state.uid = job.ref.uid();
  state.reported = Condition(job.current);
  const std::string last_event = absl::Base64Escape(event.SerializeAsString());
  const absl::Time now = options_.clock->Now();
  absl::Status s = options_.db->Write([&](db::LcDatabase::Tables& tables) -> absl::Status {
    ASSIGN_OR_RETURN(db::DesiredObject object, tables.desired.Get(ToDbRef(report.ref())));
    report.mutable_ref()->set_uid(object.ref.uid);
    report.set_observed_version(object.version);
    RETURN_IF_ERROR(
        tables.meta.Set(JobStateMetaKey(job.ref), StateToJson(state, last_event, now).dump()));
    ASSIGN_OR_RETURN(EncodedReport encoded, EncodeReport(report));
    return tables.outbox.Enqueue(encoded.key, encoded.observed_version, encoded.payload).status();
  });
  if (!s.ok()) {
    LOG(WARNING) << "job manager: " << JobKey(job.ref) << ": reporting " << event.status() << "("
                 << event.stage() << ") failed: " << s;
    return s;
  }
  LOG(INFO) << "job manager: " << JobKey(job.ref) << ": " << event.status() << "(" << event.stage()
            << ") reported: " << event.reason();
  job.state = std::move(state);
  job.last_event = last_event;
  job.reported_at = now;
  job.next_check = now + kResendAfter;
  return absl::OkStatus();
}

namespace {

// The non-empty lines [from, to) of a local text dataset (csv: after its header line), or nullopt
// when it cannot be read.
std::optional<std::vector<std::string>> ReadSamples(const std::string& path, bool csv,
                                                    uint64_t from, uint64_t to) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;  // e.g. a dir dataset
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::vector<std::string> out;
  std::string line;
  uint64_t index = 0;
  bool header = csv;
  while (index < to && std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (absl::StripAsciiWhitespace(line).empty()) continue;
    if (header) {
      header = false;
      continue;
    }
    if (index >= from) out.push_back(line);
    ++index;
  }
  return out;
}

std::string Lines(const std::vector<std::string>& lines, size_t begin, size_t end) {
  std::string out;
  for (size_t i = begin; i < end && i < lines.size(); ++i) absl::StrAppend(&out, lines[i], "\n");
  return out;
}

}  // namespace

void JobManager::EvaluateTrain(Job& job, absl::Time now) {
  if (!job.train_trigger.has_value()) return;  // Logged at Apply.
  if (!HoldsDataset(job)) return;              // Another node evaluates the trigger.
  const Trigger& trigger = *job.train_trigger;
  job.next_check = now + trigger.check_period();
  const std::string dataset_key = absl::StrCat(job.ref.namespace_(), "/", job.dataset_name);
  std::optional<uint64_t> count =
      options_.dataset_count ? options_.dataset_count(dataset_key) : std::nullopt;
  if (!count.has_value()) {
    LOG(DEBUG) << "job manager: " << JobKey(job.ref) << ": dataset " << dataset_key
               << " not counted yet";
    return;
  }
  // A dataset that shrank (replaced) starts a new baseline: its samples are all new.
  const uint64_t consumed = *count < job.state.consumed ? 0 : job.state.consumed;
  const uint64_t fresh = *count - consumed;
  const auto train_count = static_cast<uint64_t>(std::floor(fresh * job.train_prob + 1e-9));
  Metrics metrics{{"num_of_samples", {static_cast<double>(train_count)}}};
  Decision decision = trigger.Evaluate(metrics, now, options_.zone);
  if (!decision.fired) {
    LOG(DEBUG) << "job manager: " << JobKey(job.ref) << ": train trigger: " << decision.reason;
    return;
  }
  JobState next = job.state;
  next.rounds = job.state.rounds + 1;
  next.consumed = *count;
  const std::string round = absl::StrCat(next.rounds);
  const std::optional<std::string> dataset_url = DatasetUrl(job);
  std::string data_url = dataset_url.value_or("");
  std::string eval_url;
  if (IsLocalPath(job.output_dir) && dataset_url.has_value() && IsLocalPath(*dataset_url)) {
    // Sedna's layout: the round's train samples and (the trainProb remainder) eval samples.
    const bool csv = absl::EndsWithIgnoreCase(*dataset_url, ".csv");
    std::optional<std::vector<std::string>> samples =
        ReadSamples(HostPath(*dataset_url), csv, consumed, *count);
    if (samples.has_value()) {
      const size_t split = std::min(samples->size(), static_cast<size_t>(train_count));
      const std::string train_file =
          JoinPath(job.output_dir, absl::StrCat("data/train/", round, "/data.txt"));
      absl::Status s = WriteFileAtomically(HostPath(train_file), Lines(*samples, 0, split));
      if (!s.ok()) {
        LOG(WARNING) << "job manager: " << JobKey(job.ref) << ": " << s << "; retrying";
        job.next_check = now + kRetry;
        return;
      }
      data_url = train_file;
      if (split < samples->size()) {
        const std::string eval_file =
            JoinPath(job.output_dir, absl::StrCat("data/eval/", round, "/data.txt"));
        absl::Status e =
            WriteFileAtomically(HostPath(eval_file), Lines(*samples, split, samples->size()));
        if (e.ok()) eval_url = eval_file;
      }
    }
  }
  next.last_data_url = eval_url.empty() ? data_url : eval_url;
  v1::TriggerEvent event;
  event.set_stage(kTrain);
  event.set_status("Ready");
  event.set_reason(decision.reason);
  event.set_num_of_samples(static_cast<int64_t>(train_count));
  v1::StageInput* input = event.mutable_input();
  // The base model: what the last deploy installed, else the initial model (IL); LL has none.
  if (!job.lifelong) {
    const std::string& base_name =
        job.state.rounds > 0 && !job.deploy_model.empty() ? job.deploy_model : job.initial_model;
    if (std::optional<std::string> url = ModelUrl(job.ref.namespace_(), base_name)) {
      input->add_models()->set_url(*url);
    }
  }
  input->set_data_url(data_url);
  input->set_output_dir(JoinPath(job.output_dir, absl::StrCat("train/", round)));
  if (!Report(job, event, next).ok()) job.next_check = now + kRetry;
}

void JobManager::ReadyEval(Job& job, absl::Time now) {
  if (!HoldsDataset(job)) return;
  v1::TriggerEvent event;
  event.set_stage(kEval);
  event.set_status("Ready");
  event.set_reason("the trained model is ready for evaluation");
  v1::StageInput* input = event.mutable_input();
  // The models to compare: the new one(s) first, then what is deployed now.
  for (const v1::ModelInfo& m : job.current.output().models()) *input->add_models() = m;
  if (!job.lifelong) {
    const std::string& old = !job.deploy_model.empty() ? job.deploy_model : job.initial_eval_model;
    if (std::optional<std::string> url = ModelUrl(job.ref.namespace_(), old)) {
      input->add_models()->set_url(*url);
    }
  }
  input->set_data_url(job.state.last_data_url);
  input->set_output_dir(JoinPath(job.output_dir, absl::StrCat("eval/", job.state.rounds)));
  if (!Report(job, event, job.state).ok()) job.next_check = now + kRetry;
}

void JobManager::EvaluateDeploy(Job& job, absl::Time now) {
  if (!HoldsDataset(job)) return;
  // The eval output: [new model, old model] with their metrics (Sedna's order).
  const auto& models = job.current.output().models();
  v1::TriggerEvent event;
  event.set_stage(kDeploy);
  bool fired = true;
  std::string reason = "every evaluated model is deployed";
  if (!job.lifelong && job.deploy_trigger.has_value()) {
    job.next_check = now + job.deploy_trigger->check_period();
    Metrics metrics;
    if (models.size() >= 1) {
      for (const auto& [name, value] : models[0].metrics()) {
        std::vector<double> values(value.values().begin(), value.values().end());
        metrics[name] = values;
        if (models.size() >= 2) {
          auto old = models[1].metrics().find(name);
          if (old != models[1].metrics().end()) {
            std::vector<double> delta;
            for (int i = 0; i < value.values_size() && i < old->second.values_size(); ++i) {
              delta.push_back(value.values(i) - old->second.values(i));
            }
            metrics[absl::StrCat(name, "_delta")] = std::move(delta);
          }
        }
      }
    }
    Decision decision = job.deploy_trigger->Evaluate(metrics, now, options_.zone);
    fired = decision.fired;
    reason = decision.reason;
    // Outside the timer window the decision waits for the window; a metric that holds or fails
    // is final for this round.
    if (!fired && !job.deploy_trigger->InWindow(now, options_.zone)) return;
  }
  event.set_status(fired ? "Ready" : "Completed");
  event.set_reason(reason);
  if (fired && models.size() >= 1) *event.mutable_input()->add_models() = models[0];
  if (!Report(job, event, job.state).ok()) job.next_check = now + kRetry;
}

void JobManager::InstallDeploy(Job& job, absl::Time now) {
  const std::string deploy_node = !job.nodes.deploy().empty()
                                      ? job.nodes.deploy()
                                      : (HoldsDataset(job) ? options_.node_name : "");
  if (deploy_node != options_.node_name) return;
  std::string model_path;
  if (job.current.input().models_size() > 0) model_path = job.current.input().models(0).url();
  v1::TriggerEvent event;
  event.set_stage(kDeploy);
  if (job.hot_update) {
    const std::string dir =
        absl::StrCat(kHotUpdateHostPrefix, "/", job.ref.namespace_(), "/",
                     absl::AsciiStrToLower(job.ref.kind()), "/", job.ref.name());
    Json config = {
        {"model_config",
         {{"model_path", model_path},
          {"model_update_time", absl::FormatTime("%Y-%m-%d %H:%M:%S", now, absl::UTCTimeZone())}}}};
    absl::Status s = WriteFileAtomically(HostPath(JoinPath(dir, kHotUpdateFile)), config.dump());
    if (!s.ok()) {
      event.set_status("Failed");
      event.set_reason(std::string(s.message()));
    } else {
      event.set_status("Installed");
      event.set_reason(absl::StrCat("hot-update file written for ", model_path));
    }
  } else {
    // Sedna's install: the trained model is copied over what the inference worker loads (IL: the
    // deploy Model's url; LL: <outputDir>/deploy/index.pkl), then the GM restarts the worker.
    std::optional<std::string> target =
        job.lifelong ? std::optional<std::string>(JoinPath(job.output_dir, "deploy/index.pkl"))
                     : ModelUrl(job.ref.namespace_(), job.deploy_model);
    absl::Status s = absl::OkStatus();
    if (!target.has_value()) {
      s = absl::FailedPreconditionError(
          absl::StrCat("the deploy model ", job.deploy_model, " is not on this node"));
    } else if (IsLocalPath(model_path) && IsLocalPath(*target)) {
      std::ifstream in(HostPath(model_path), std::ios::binary);
      std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      s = in.bad() || !std::filesystem::is_regular_file(HostPath(model_path))
              ? absl::NotFoundError(
                    absl::StrCat("the trained model ", model_path, " is not a readable file"))
              : WriteFileAtomically(HostPath(*target), bytes);
    }
    // Remote models (s3/http) are published by the training worker itself; nothing to copy.
    if (!s.ok()) {
      event.set_status("Failed");
      event.set_reason(std::string(s.message()));
    } else {
      event.set_status("Installed");
      event.set_reason(absl::StrCat("model ", model_path, " installed at ", target.value_or("")));
    }
  }
  if (!Report(job, event, job.state).ok()) job.next_check = now + kRetry;
}

}  // namespace nereid::lc::trigger
