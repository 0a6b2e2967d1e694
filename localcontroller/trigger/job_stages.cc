// What each stage of an IL/LL job does on this node (job_manager.h has the whole contract): the
// train trigger on the dataset's new samples, the eval inputs, the deploy trigger on the eval
// metrics, the install. Each ends in JobManager::Report.

#include "localcontroller/trigger/job_manager.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/log/log.h"
#include "common/process/unique_fd.h"
#include "common/status/macros.h"
#include "localcontroller/cloudlink/lc_db_adapter.h"
#include "localcontroller/trigger/job_manager_job.h"

namespace nereid::lc::trigger {
namespace {

namespace v1 = edge::v1;
using Json = nlohmann::json;

constexpr char kHotUpdateHostPrefix[] = "/var/lib/sedna/model-hot-update";
constexpr char kHotUpdateFile[] = "model_config.json";

bool IsLocalPath(const std::string& url) { return absl::StartsWith(url, "/"); }

std::string JoinPath(std::string_view a, std::string_view b) {
  std::string out(a);
  while (!out.empty() && out.back() == '/') out.pop_back();
  return absl::StrCat(out, "/", std::string(b));
}

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

absl::Status WriteFileAtomically(const std::string& path, const std::string& contents) {
  std::error_code ec;
  const std::filesystem::path target(path);
  std::filesystem::create_directories(target.parent_path(), ec);
  if (ec) return absl::InternalError(absl::StrCat("creating its directory: ", ec.message()));
  const std::string tmp = absl::StrCat(path, ".tmp");
  UniqueFd fd(open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd.valid()) {
    return absl::InternalError(absl::StrCat("creating a temporary file: ", std::strerror(errno)));
  }
  std::string_view rest = contents;
  int err = 0;
  while (!rest.empty() && err == 0) {
    const ssize_t n = write(fd.get(), rest.data(), rest.size());
    if (n < 0 && errno != EINTR) err = errno;
    if (n > 0) rest.remove_prefix(static_cast<size_t>(n));
  }
  if (fd.Close() != 0 && err == 0) err = errno;
  if (err == 0 && std::rename(tmp.c_str(), path.c_str()) != 0) {
    err = errno;
    std::remove(tmp.c_str());
    return absl::InternalError(absl::StrCat("renaming it into place: ", std::strerror(err)));
  }
  if (err != 0) {
    std::remove(tmp.c_str());
    return absl::InternalError(absl::StrCat("writing a temporary file: ", std::strerror(err)));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> JobManager::LocalPath(const std::string& host_path) const {
  RETURN_IF_ERROR(options_.data_roots.Check(host_path));
  const size_t relative = host_path.find_first_not_of('/');
  if (options_.host_root.empty() || options_.host_root == "/") return host_path;
  if (relative == std::string::npos) return options_.host_root;
  return JoinPath(options_.host_root, host_path.substr(relative));
}

absl::Status JobManager::WriteHostFile(const std::string& host_path,
                                       const std::string& contents) const {
  absl::StatusOr<std::string> local = LocalPath(host_path);
  if (!local.ok()) return local.status();
  absl::Status s = WriteFileAtomically(*local, contents);
  if (s.ok()) return s;
  std::string message = absl::StrCat("writing ", host_path, ": ", s.message());
  if (absl::StrContains(message, std::strerror(EROFS))) {
    absl::StrAppend(&message,
                    " (the LC's mount of this directory is read-only: it must lie in a writable "
                    "data root, deploy/README.md \"Data roots\")");
  }
  return absl::Status(s.code(), message);
}

void JobManager::FailPreparation(Job& job, absl::Time now, std::string_view stage,
                                 std::string reason) {
  LOG(WARNING) << "job manager: " << JobKey(job.ref) << ": " << reason << "; reporting Failed("
               << stage << ")";
  absl::Duration wait = kWriteRetry;
  if (job.train_trigger.has_value()) wait = std::max(wait, job.train_trigger->check_period());
  job.write_retry_at = now + wait;
  v1::TriggerEvent event;
  event.set_stage(std::string(stage));
  event.set_status("Failed");
  event.set_reason(std::move(reason));
  if (!Report(job, event, job.state).ok()) job.next_check = now + kRetry;
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

void JobManager::EvaluateTrain(Job& job, absl::Time now) {
  if (!job.train_trigger.has_value()) return;  // Logged at Apply.
  if (!HoldsDataset(job)) return;              // Another node evaluates the trigger.
  if (now < job.write_retry_at) {
    job.next_check = job.write_retry_at;
    return;
  }
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
    absl::StatusOr<std::string> dataset_path = LocalPath(*dataset_url);
    std::optional<std::vector<std::string>> samples =
        dataset_path.ok() ? ReadSamples(*dataset_path, csv, consumed, *count) : std::nullopt;
    if (samples.has_value()) {
      const size_t split = std::min(samples->size(), static_cast<size_t>(train_count));
      const std::string train_file =
          JoinPath(job.output_dir, absl::StrCat("data/train/", round, "/data.txt"));
      absl::Status s = WriteHostFile(train_file, Lines(*samples, 0, split));
      const std::string eval_file =
          JoinPath(job.output_dir, absl::StrCat("data/eval/", round, "/data.txt"));
      if (s.ok() && split < samples->size()) {
        s = WriteHostFile(eval_file, Lines(*samples, split, samples->size()));
        if (s.ok()) eval_url = eval_file;
      }
      if (!s.ok()) {
        return FailPreparation(job, now, kTrain,
                               absl::StrCat("cannot store the round's samples in the outputDir: ",
                                            s.message()));
      }
      data_url = train_file;
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
    absl::Status s = WriteHostFile(JoinPath(dir, kHotUpdateFile), config.dump());
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
      absl::StatusOr<std::string> source = LocalPath(model_path);
      if (!source.ok()) {
        s = source.status();
      } else {
        std::ifstream in(*source, std::ios::binary);
        std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        s = in.bad() || !std::filesystem::is_regular_file(*source)
                ? absl::NotFoundError(
                      absl::StrCat("the trained model ", model_path, " is not a readable file"))
                : WriteHostFile(*target, bytes);
      }
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
