#pragma once

// Leader election on a coordination.k8s.io/v1 Lease (client-go tools/leaderelection), so that of
// several GlobalManager replicas exactly one runs the controllers.
//
//   - A candidate reads the Lease every retry_period (jittered by up to jitter_factor·retry_period)
//     and takes it when it is free (no holder, e.g. released) or expired: unchanged for
//     lease_duration since *this candidate* first saw that record, measured on its own Clock —
//     never by comparing the remote renewTime with the local clock, so clock skew does not matter.
//   - Writes use the Lease's resourceVersion (optimistic concurrency): a 409 means another
//     candidate won the race.
//   - The leader renews (renewTime) every retry_period; if no renewal succeeds within
//     renew_deadline it stops leading. Because renew_deadline < lease_duration, a leader that can
//     no longer renew steps down before anyone else can take over.
//   - On Stop(), a leader with release_on_cancel clears holderIdentity and sets
//     leaseDurationSeconds=1, so a successor takes over at its next retry instead of waiting for
//     the lease to expire. on_stopped_leading runs before the release: stop the guarded work there.
//   - After losing the lease the elector becomes a candidate again. A daemon that cannot cleanly
//     restart its controllers should exit from on_stopped_leading (as controller-runtime does).
//
// on_started_leading runs on a thread of its own (it may block, e.g. waiting for caches to sync);
// on_stopped_leading and on_new_leader run on the elector's thread, on_stopped_leading only after
// on_started_leading has returned. They should return promptly: the elector does not renew (and,
// on Stop, does not release) until they do.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/kube/client.h"
#include "common/kube/object.h"
#include "common/time/clock.h"

namespace nereid::kube {

struct LeaderElectionConfig {
  std::string lease_namespace;
  std::string lease_name;
  std::string identity;  // Unique per candidate, e.g. the pod name.
  absl::Duration lease_duration = absl::Seconds(15);
  absl::Duration renew_deadline = absl::Seconds(10);
  absl::Duration retry_period = absl::Seconds(2);
  double jitter_factor = 1.2;
  bool release_on_cancel = true;
  std::function<void()> on_started_leading;
  std::function<void()> on_stopped_leading;
  std::function<void(const std::string& identity)> on_new_leader;  // Observed holder changed.
  // Written into the Lease's metadata.annotations while this candidate holds it (and removed when
  // it releases it), so the other candidates learn something about the holder, e.g. where it
  // serves: LeaderAnnotation().
  std::map<std::string, std::string> holder_annotations;
  // Written into the Lease's metadata.labels whenever this candidate writes it as the holder, and
  // kept when it releases it, so a label selector finds a family of Leases (edge_shards.h).
  std::map<std::string, std::string> labels;
  // Random source in [0, 1) for the jitter; nullptr: a real one.
  std::function<double()> uniform01;
};

// client-go's rules: lease_duration > renew_deadline > jitter_factor·retry_period, all positive,
// names and identity non-empty.
absl::Status ValidateLeaderElectionConfig(const LeaderElectionConfig& config);

class LeaderElector {
 public:
  static absl::StatusOr<std::unique_ptr<LeaderElector>> Create(KubeClient* client,
                                                               LeaderElectionConfig config,
                                                               Clock* clock = nullptr);
  ~LeaderElector();
  LeaderElector(const LeaderElector&) = delete;
  LeaderElector& operator=(const LeaderElector&) = delete;

  void Start();
  // Stops the elector; a leader stops leading and, with release_on_cancel, releases the Lease.
  void Stop();

  // Leading, and the last successful renewal is recent enough that nobody else can hold the Lease.
  bool IsLeader() const;
  // The holder last observed in the Lease ("" if none).
  std::string GetLeader() const;
  // The annotation `key` of the Lease as last observed with a holder ("" if the Lease has no
  // holder or no such annotation). Read it from on_new_leader for the holder it names.
  std::string LeaderAnnotation(std::string_view key) const;

  // True while the elector thread is waiting on the Clock for a time still in the future, i.e. it
  // will do nothing until the clock is advanced (lets FakeClock tests step time deterministically).
  bool ParkedForTest() const;

 private:
  LeaderElector(KubeClient* client, LeaderElectionConfig config, Clock* clock);

  void Run();
  bool TryAcquireOrRenew();
  void Release();
  void ReportTransition();
  // Records `lease` as observed: its holder and annotations.
  void Observe(const Json& lease);
  // `lease` with this candidate's holder_annotations set (held) or removed (released).
  Json WithHolderAnnotations(Json lease, bool held) const;
  bool WaitOrStop(absl::Duration delay);
  bool Stopped() const;
  Json MakeSpec(absl::Time now, const std::string& holder, int64_t duration_seconds,
                std::optional<std::string> acquire_time, int64_t transitions) const;

  KubeClient* const client_;
  const LeaderElectionConfig config_;
  Clock* const clock_;
  std::function<double()> uniform01_;

  // Owned by the elector thread.
  Json lease_;                // Last Lease object read or written (for its resourceVersion).
  Json observed_spec_;        // Last observed Lease spec.
  absl::Time observed_time_;  // When observed_spec_ was first seen, on our clock.
  std::string reported_leader_;
  bool reported_any_ = false;

  mutable absl::Mutex mu_;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  bool leading_ ABSL_GUARDED_BY(mu_) = false;
  absl::Time renewed_at_ ABSL_GUARDED_BY(mu_);
  std::string observed_holder_ ABSL_GUARDED_BY(mu_);
  Json observed_annotations_ ABSL_GUARDED_BY(mu_);  // of the Lease with observed_holder_
  absl::Time waiting_until_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  std::thread thread_;
};

}  // namespace nereid::kube
