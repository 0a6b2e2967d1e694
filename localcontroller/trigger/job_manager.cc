#include "localcontroller/trigger/job_manager.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/log/log.h"
#include "common/net/edge_protocol.h"
#include "common/status/macros.h"
#include "localcontroller/cloudlink/lc_db_adapter.h"
#include "localcontroller/trigger/job_manager_job.h"

namespace nereid::lc::trigger {
namespace {

namespace v1 = edge::v1;
using Json = nlohmann::json;

// A report whose condition the GM never moved past (lost while the LC was down, coalesced pushes)
// is sent again after this long; the GM ignores a repeated report.
constexpr absl::Duration kResendAfter = absl::Minutes(5);

std::string Condition(const v1::JobStage& stage) {
  return absl::StrCat(stage.stage(), ":", stage.type());
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

std::string JobKey(const v1::ObjectRef& ref) {
  return absl::StrCat(ref.kind(), "/", ref.namespace_(), "/", ref.name());
}

std::string JobStateMetaKey(const v1::ObjectRef& ref) {
  return absl::StrCat("lcjob/", JobKey(ref));
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
    parsed.write_retry_at = old.write_retry_at;
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

}  // namespace nereid::lc::trigger
