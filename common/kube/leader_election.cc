#include "common/kube/leader_election.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "common/kube/errors.h"
#include "common/kube/resource.h"
#include "common/kube/thread_name.h"
#include "common/log/log.h"

namespace nereid::kube {
namespace {

// metav1.MicroTime, as Lease renewTime/acquireTime are written.
std::string FormatMicroTime(absl::Time time) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", time, absl::UTCTimeZone());
}

std::string HolderOf(const Json& spec) {
  const Json* holder = FindPath(spec, "holderIdentity");
  return holder != nullptr && holder->is_string() ? holder->get<std::string>() : std::string();
}

int64_t TransitionsOf(const Json& spec) {
  const Json* transitions = FindPath(spec, "leaseTransitions");
  return transitions != nullptr && transitions->is_number_integer() ? transitions->get<int64_t>()
                                                                    : 0;
}

Json SpecOf(const Json& lease) {
  const Json* spec = FindPath(lease, "spec");
  return spec != nullptr && spec->is_object() ? *spec : Json::object();
}

}  // namespace

absl::Status ValidateLeaderElectionConfig(const LeaderElectionConfig& config) {
  if (config.lease_name.empty() || config.lease_namespace.empty()) {
    return absl::InvalidArgumentError("leader election needs a lease namespace and name");
  }
  if (config.identity.empty()) {
    return absl::InvalidArgumentError("leader election needs a non-empty identity");
  }
  if (config.retry_period <= absl::ZeroDuration() || config.jitter_factor < 0) {
    return absl::InvalidArgumentError("retry period must be positive, jitter not negative");
  }
  if (config.lease_duration <= config.renew_deadline) {
    return absl::InvalidArgumentError("lease duration must be greater than the renew deadline");
  }
  if (config.renew_deadline <= config.retry_period * config.jitter_factor) {
    return absl::InvalidArgumentError(
        "renew deadline must be greater than retry period × jitter factor");
  }
  if (config.lease_duration < absl::Seconds(1)) {
    return absl::InvalidArgumentError("lease duration must be at least 1 s");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<LeaderElector>> LeaderElector::Create(KubeClient* client,
                                                                     LeaderElectionConfig config,
                                                                     Clock* clock) {
  if (absl::Status status = ValidateLeaderElectionConfig(config); !status.ok()) return status;
  return std::unique_ptr<LeaderElector>(
      new LeaderElector(client, std::move(config), clock != nullptr ? clock : Clock::Real()));
}

LeaderElector::LeaderElector(KubeClient* client, LeaderElectionConfig config, Clock* clock)
    : client_(client), config_(std::move(config)), clock_(clock), uniform01_(config_.uniform01) {
  if (!uniform01_) {
    uniform01_ = [gen = std::make_shared<absl::BitGen>()]() {
      return absl::Uniform<double>(*gen, 0.0, 1.0);
    };
  }
}

LeaderElector::~LeaderElector() { Stop(); }

void LeaderElector::Start() {
  absl::MutexLock lock(&mu_);
  if (thread_.joinable() || stopped_) return;
  thread_ = std::thread([this] { Run(); });
}

void LeaderElector::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopped_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

bool LeaderElector::Stopped() const {
  absl::MutexLock lock(&mu_);
  return stopped_;
}

bool LeaderElector::IsLeader() const {
  absl::MutexLock lock(&mu_);
  return leading_ && clock_->Now() < renewed_at_ + config_.lease_duration;
}

std::string LeaderElector::GetLeader() const {
  absl::MutexLock lock(&mu_);
  return observed_holder_;
}

std::string LeaderElector::LeaderAnnotation(std::string_view key) const {
  absl::MutexLock lock(&mu_);
  if (observed_holder_.empty() || !observed_annotations_.is_object()) return "";
  const auto it = observed_annotations_.find(std::string(key));
  return it != observed_annotations_.end() && it->is_string() ? it->get<std::string>() : "";
}

void LeaderElector::Observe(const Json& lease) {
  const Json* annotations = FindPath(lease, "metadata.annotations");
  absl::MutexLock lock(&mu_);
  observed_holder_ = HolderOf(SpecOf(lease));
  observed_annotations_ = annotations != nullptr ? *annotations : Json();
}

Json LeaderElector::WithHolderAnnotations(Json lease, bool held) const {
  if (held && !config_.labels.empty()) {
    Json& labels = lease["metadata"]["labels"];
    if (!labels.is_object()) labels = Json::object();
    for (const auto& [key, value] : config_.labels) labels[key] = value;
  }
  if (config_.holder_annotations.empty()) return lease;
  Json& annotations = lease["metadata"]["annotations"];
  if (!annotations.is_object()) annotations = Json::object();
  for (const auto& [key, value] : config_.holder_annotations) {
    if (held) {
      annotations[key] = value;
    } else {
      annotations.erase(key);
    }
  }
  return lease;
}

bool LeaderElector::ParkedForTest() const {
  absl::MutexLock lock(&mu_);
  return waiting_until_ > clock_->Now();
}

bool LeaderElector::WaitOrStop(absl::Duration delay) {
  absl::MutexLock lock(&mu_);
  waiting_until_ = clock_->Now() + delay;
  clock_->AwaitWithDeadline(&mu_, absl::Condition(&stopped_), waiting_until_);
  waiting_until_ = absl::InfinitePast();
  return !stopped_;
}

Json LeaderElector::MakeSpec(absl::Time now, const std::string& holder, int64_t duration_seconds,
                             std::optional<std::string> acquire_time, int64_t transitions) const {
  return Json{{"holderIdentity", holder},
              {"leaseDurationSeconds", duration_seconds},
              {"acquireTime", acquire_time ? *acquire_time : FormatMicroTime(now)},
              {"renewTime", FormatMicroTime(now)},
              {"leaseTransitions", transitions}};
}

bool LeaderElector::TryAcquireOrRenew() {
  const absl::Time now = clock_->Now();
  const int64_t duration_seconds =
      std::max<int64_t>(1, absl::ToInt64Seconds(config_.lease_duration));
  const Resource& leases = resources::Leases();
  const std::string lease_key = MakeKey(config_.lease_namespace, config_.lease_name);

  absl::StatusOr<Json> current = client_->Get(leases, config_.lease_namespace, config_.lease_name);
  if (!current.ok() && absl::IsNotFound(current.status())) {
    Json lease = {
        {"apiVersion", leases.ApiVersion()},
        {"kind", leases.kind},
        {"metadata", {{"name", config_.lease_name}, {"namespace", config_.lease_namespace}}},
        {"spec", MakeSpec(now, config_.identity, duration_seconds, std::nullopt, 0)}};
    absl::StatusOr<Json> created =
        client_->Create(leases, config_.lease_namespace, WithHolderAnnotations(lease, true));
    if (!created.ok()) {
      LOG(INFO) << "leader election " << lease_key << ": create: " << created.status();
      return false;
    }
    lease_ = *std::move(created);
    observed_spec_ = SpecOf(lease_);
    observed_time_ = now;
    Observe(lease_);
    return true;
  }
  if (!current.ok()) {
    LOG(WARNING) << "leader election " << lease_key << ": get: " << current.status();
    return false;
  }

  lease_ = *std::move(current);
  Json spec = SpecOf(lease_);
  if (spec != observed_spec_) {
    // A new record: its expiry counts from now, on our clock.
    observed_spec_ = spec;
    observed_time_ = now;
  }
  const std::string holder = HolderOf(spec);
  Observe(lease_);
  if (!holder.empty() && holder != config_.identity &&
      observed_time_ + config_.lease_duration > now) {
    return false;  // Held by someone else and not expired.
  }

  Json next_spec;
  if (holder == config_.identity) {
    const Json* acquire = FindPath(spec, "acquireTime");
    next_spec = MakeSpec(now, config_.identity, duration_seconds,
                         acquire != nullptr && acquire->is_string()
                             ? std::optional<std::string>(acquire->get<std::string>())
                             : std::nullopt,
                         TransitionsOf(spec));
  } else {
    next_spec =
        MakeSpec(now, config_.identity, duration_seconds, std::nullopt, TransitionsOf(spec) + 1);
  }
  Json next = WithHolderAnnotations(lease_, true);
  next["spec"] = next_spec;
  absl::StatusOr<Json> updated = client_->Update(leases, next);
  if (!updated.ok()) {
    if (IsConflict(updated.status())) {
      LOG(DEBUG) << "leader election " << lease_key << ": lost a race: " << updated.status();
    } else {
      LOG(WARNING) << "leader election " << lease_key << ": update: " << updated.status();
    }
    return false;
  }
  lease_ = *std::move(updated);
  observed_spec_ = SpecOf(lease_);
  observed_time_ = now;
  Observe(lease_);
  return true;
}

void LeaderElector::Release() {
  if (HolderOf(observed_spec_) != config_.identity) return;
  const absl::Time now = clock_->Now();
  Json next = WithHolderAnnotations(lease_, false);
  next["spec"] = MakeSpec(now, "", 1, std::nullopt, TransitionsOf(observed_spec_));
  absl::StatusOr<Json> updated = client_->Update(resources::Leases(), next);
  const std::string lease_key = MakeKey(config_.lease_namespace, config_.lease_name);
  if (!updated.ok()) {
    LOG(WARNING) << "leader election " << lease_key << ": release: " << updated.status();
    return;
  }
  lease_ = *std::move(updated);
  observed_spec_ = SpecOf(lease_);
  observed_time_ = now;
  Observe(lease_);
  LOG(INFO) << "leader election " << lease_key << ": " << config_.identity << " released the lease";
}

void LeaderElector::ReportTransition() {
  const std::string holder = GetLeader();
  if (reported_any_ && holder == reported_leader_) return;
  reported_any_ = true;
  reported_leader_ = holder;
  if (config_.on_new_leader) config_.on_new_leader(holder);
}

void LeaderElector::Run() {
  SetCurrentThreadName("leader-elect");
  const std::string lease_key = MakeKey(config_.lease_namespace, config_.lease_name);
  while (!Stopped()) {
    // Candidate: try every retry period, jittered so candidates do not move in lockstep.
    bool acquired = false;
    while (true) {
      acquired = TryAcquireOrRenew();
      ReportTransition();
      if (acquired) break;
      const absl::Duration wait =
          config_.retry_period * (1.0 + config_.jitter_factor * uniform01_());
      if (!WaitOrStop(wait)) break;
    }
    if (!acquired) break;
    {
      absl::MutexLock lock(&mu_);
      leading_ = true;
      renewed_at_ = clock_->Now();
    }
    LOG(INFO) << "leader election " << lease_key << ": " << config_.identity
              << " became the leader";
    // Its own thread, as client-go's goroutine: starting the guarded work (e.g. waiting for caches)
    // must not delay renewals. on_stopped_leading runs only after it has returned.
    std::thread starter;
    if (config_.on_started_leading) {
      starter = std::thread([this] {
        SetCurrentThreadName("leader-start");
        config_.on_started_leading();
      });
    }

    // Leader: renew every retry period; give up if renew_deadline passes without a renewal.
    bool stopped = false;
    while (true) {
      if (!WaitOrStop(config_.retry_period)) {
        stopped = true;
        break;
      }
      const absl::Time deadline = clock_->Now() + config_.renew_deadline;
      bool renewed = false;
      while (true) {
        const absl::Time attempt = clock_->Now();
        if (attempt >= deadline) break;
        if (TryAcquireOrRenew()) {
          renewed = true;
          absl::MutexLock lock(&mu_);
          renewed_at_ = attempt;
          break;
        }
        if (!WaitOrStop(std::min(config_.retry_period, deadline - attempt))) {
          stopped = true;
          break;
        }
      }
      ReportTransition();
      if (stopped || !renewed) break;
    }
    {
      absl::MutexLock lock(&mu_);
      leading_ = false;
    }
    if (stopped) {
      LOG(INFO) << "leader election " << lease_key << ": " << config_.identity
                << " stops leading (shutdown)";
    } else {
      LOG(WARNING) << "leader election " << lease_key << ": " << config_.identity
                   << " failed to renew within " << absl::FormatDuration(config_.renew_deadline)
                   << "; stops leading";
    }
    if (starter.joinable()) starter.join();
    if (config_.on_stopped_leading) config_.on_stopped_leading();
    if (stopped || Stopped()) {
      if (config_.release_on_cancel) Release();
      break;
    }
  }
}

}  // namespace nereid::kube
