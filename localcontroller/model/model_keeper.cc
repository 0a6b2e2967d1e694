#include "localcontroller/model/model_keeper.h"

#include <pthread.h>

#include <utility>

#include "common/log/log.h"
#include "localcontroller/dataset/errors.h"
#include "localcontroller/dataset/sample_counter.h"

namespace nereid::lc::model {

ReportedModelState ReportedStateOf(const Check& check) {
  return ReportedModelState{check.verified, check.sha256, check.reason, check.message};
}

ModelKeeper::ModelKeeper(Options options)
    : options_(std::move(options)), verifier_(options_.verifier) {}

ModelKeeper::~ModelKeeper() { Stop(); }

void ModelKeeper::Start() {
  absl::MutexLock lock(&mu_);
  if (started_ || stopping_) return;
  started_ = true;
  thread_ = std::thread([this] { Run(); });
}

void ModelKeeper::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    wake_ = true;
    cancel_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

bool ModelKeeper::running() const {
  absl::MutexLock lock(&mu_);
  return started_ && !stopping_;
}

void ModelKeeper::Upsert(const ModelSpec& spec, std::optional<Check> prior) {
  absl::MutexLock lock(&mu_);
  auto [it, inserted] = models_.try_emplace(spec.key);
  Tracked& t = it->second;
  if (inserted) {
    t.spec = spec;
    t.generation = next_generation_++;
    if (prior.has_value()) {
      t.reported = ReportedStateOf(*prior);
      t.previous = std::move(prior);
    }
    t.due = absl::InfinitePast();
    wake_ = true;
    return;
  }
  if (t.spec == spec) return;
  LOG(INFO) << "model " << spec.key << ": spec changed (url " << dataset::RedactUrl(spec.url)
            << "), checking again";
  t.spec = spec;
  t.generation = next_generation_++;
  t.previous.reset();
  t.due = absl::InfinitePast();
  if (checking_ == spec.key) cancel_ = true;
  wake_ = true;
}

void ModelKeeper::Remove(const std::string& key) {
  absl::MutexLock lock(&mu_);
  if (models_.erase(key) == 0) return;
  if (checking_ == key) cancel_ = true;
  if (reporting_ == key) {
    auto done = [this, &key]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return reporting_ != key; };
    mu_.Await(absl::Condition(&done));
  }
}

void ModelKeeper::RequestCheck(const std::string& key) {
  absl::MutexLock lock(&mu_);
  auto it = models_.find(key);
  if (it == models_.end()) return;
  it->second.due = absl::InfinitePast();
  wake_ = true;
}

std::optional<ModelReport> ModelKeeper::Last(const std::string& key) const {
  absl::MutexLock lock(&mu_);
  auto it = models_.find(key);
  if (it == models_.end()) return std::nullopt;
  return it->second.last;
}

std::vector<ModelSpec> ModelKeeper::Specs() const {
  absl::MutexLock lock(&mu_);
  std::vector<ModelSpec> specs;
  specs.reserve(models_.size());
  for (const auto& [key, t] : models_) specs.push_back(t.spec);
  return specs;
}

size_t ModelKeeper::size() const {
  absl::MutexLock lock(&mu_);
  return models_.size();
}

ModelKeeper::Stats ModelKeeper::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

absl::Duration ModelKeeper::PeriodFor(const ModelSpec& spec) const {
  std::string path;
  const dataset::UrlKind kind = dataset::ClassifyUrl(spec.url, &path);
  return kind == dataset::UrlKind::kHttp || kind == dataset::UrlKind::kS3
             ? options_.http_check_period
             : options_.check_period;
}

void ModelKeeper::Run() {
  pthread_setname_np(pthread_self(), "model-check");
  absl::MutexLock lock(&mu_);
  while (!stopping_) {
    absl::Time wake = absl::InfiniteFuture();
    std::optional<std::string> key = NextDueLocked(options_.clock->Now(), &wake);
    if (key.has_value()) {
      CheckLocked(*key);
      continue;
    }
    wake_ = false;
    options_.clock->AwaitWithDeadline(&mu_, absl::Condition(&wake_), wake);
  }
}

std::optional<std::string> ModelKeeper::NextDueLocked(absl::Time now, absl::Time* wake) {
  std::optional<std::string> best;
  absl::Time best_due = absl::InfiniteFuture();
  for (const auto& [key, t] : models_) {
    if (t.due <= now) {
      if (!best.has_value() || t.due < best_due) {
        best = key;
        best_due = t.due;
      }
    } else {
      *wake = std::min(*wake, t.due);
    }
  }
  return best;
}

void ModelKeeper::CheckLocked(const std::string& key) {
  Tracked& t = models_.at(key);
  const absl::Time start = options_.clock->Now();
  t.due = start + PeriodFor(t.spec);
  const ModelSpec spec = t.spec;
  const uint64_t generation = t.generation;
  const std::optional<Check> previous = t.previous;
  checking_ = key;
  cancel_ = false;

  mu_.Unlock();
  absl::StatusOr<Check> result =
      verifier_.Verify(spec, previous.has_value() ? &*previous : nullptr, &cancel_);
  mu_.Lock();

  ++stats_.checks;
  checking_.clear();
  auto it = models_.find(key);
  if (it == models_.end() || it->second.generation != generation || stopping_) return;
  Tracked& current = it->second;
  if (!result.ok()) {
    // FileChanged / Cancelled: not a result; look again soon.
    LOG(DEBUG) << "model " << key << ": " << result.status().message() << "; checking again";
    current.due = options_.clock->Now() + options_.retry_delay;
    return;
  }
  stats_.bytes_hashed += result->bytes_hashed;
  ModelReport report{spec, *result, options_.clock->Now()};
  current.previous = *result;
  current.last = report;
  const ReportedModelState state = ReportedStateOf(*result);
  const bool emit = !current.reported.has_value() || !(*current.reported == state);
  if (!emit) return;
  current.reported = state;
  ++stats_.reports;
  if (state.reason.empty()) {
    LOG(INFO) << "model " << key << ": "
              << (state.verified ? "verified, sha256 " + state.sha256
                                 : std::string(result->present ? "present" : "not checked") +
                                       ", not verified (no sha256 given)");
  } else {
    LOG(WARNING) << "model " << key << ": " << state.reason << ": " << state.message;
  }
  reporting_ = key;
  mu_.Unlock();
  const absl::Status stored = options_.on_report ? options_.on_report(report) : absl::OkStatus();
  mu_.Lock();
  reporting_.clear();
  if (stored.ok()) return;
  auto again = models_.find(key);
  if (again == models_.end() || again->second.generation != generation) return;
  again->second.reported.reset();
  again->second.due = std::min(again->second.due, options_.clock->Now() + options_.retry_delay);
}

}  // namespace nereid::lc::model
