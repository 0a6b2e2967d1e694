#pragma once

// What the soak does to the cluster (soak_cluster.h) while it is sampled, one round per `round`
// (default 1 s) on its own thread until Stop():
//   appends     `lines_per_append` lines to each of the real LCs' fixed Datasets' files (two per
//               LC): the LC's monitor counts them, reports them, the GM writes the status;
//   datasets    one Dataset created per round on a simulated node (round-robin) and the one
//               created `sim_dataset_window` rounds before deleted — a steady churn through the
//               GM's informer, controller and edge hub; every `report_every` rounds each simulated
//               node reports every Dataset it holds (GM → status writes);
//   LC churn    every 5 rounds a Dataset is created on a real LC (alternating) and the one from
//               20 rounds before deleted: inserts and deletes in the LCs' SQLite databases;
//   models      every 5 rounds a Model created, the one from `model_window` × 5 rounds before
//               deleted;
//   services    every 10 rounds a JointInferenceService (edge worker on a real LC, cloud worker
//               unplaced) created and the one from 30 rounds before deleted: the GM creates and
//               garbage-collects its Deployments and Services. These stand in for "jobs": the
//               training jobs need worker pods to run and report, which no kubelet runs here.
// Each API call that fails is counted; the first failure is kept.

#include <map>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "bench/soak/soak_cluster.h"
#include "common/kube/resource.h"
#include "nlohmann/json.hpp"

namespace nereid::bench {

class SoakWorkload {
 public:
  struct Options {
    absl::Duration round = absl::Seconds(1);
    int lines_per_append = 20;
    int sim_dataset_window = 100;
    int report_every = 5;
    int model_window = 10;
    std::string ns = "default";
  };
  struct Counts {
    int64_t rounds = 0;
    int64_t creates = 0;
    int64_t deletes = 0;
    int64_t appended_lines = 0;
    int64_t reports_queued = 0;  // by the simulated nodes
    int64_t failures = 0;
    std::string first_failure;
  };

  SoakWorkload(Options options, SoakCluster* cluster)
      : options_(std::move(options)), cluster_(cluster) {}
  ~SoakWorkload() { Stop(); }
  SoakWorkload(const SoakWorkload&) = delete;
  SoakWorkload& operator=(const SoakWorkload&) = delete;

  // The Models the services use and the LCs' fixed Datasets with their first lines.
  absl::Status Prepare();
  void Start();
  // Ends the round in progress and joins the thread. Idempotent.
  void Stop();
  Counts counts() const;

  // After Stop(): waits (at most `timeout`) until every fixed LC Dataset's status in the API shows
  // the lines in its file and every simulated report is answered.
  absl::Status WaitConverged(absl::Duration timeout);

 private:
  void Loop();
  void Round(int64_t round);
  void AppendLines(const std::string& file, int lines);
  void Create(const kube::Resource& resource, nlohmann::json object);
  void Delete(const kube::Resource& resource, const std::string& name);
  void Fail(const std::string& what, const absl::Status& status);
  nlohmann::json DatasetObject(const std::string& name, const std::string& node,
                               const std::string& url) const;

  const Options options_;
  SoakCluster* const cluster_;
  std::thread thread_;
  absl::Notification stop_;
  bool started_ = false;

  mutable absl::Mutex mu_;
  Counts counts_ ABSL_GUARDED_BY(mu_);
  // Fixed LC Datasets: name → (file, lines written). Only the workload thread writes after Start.
  std::map<std::string, std::pair<std::string, int64_t>> lc_datasets_;
};

}  // namespace nereid::bench
