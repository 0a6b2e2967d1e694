#pragma once

// The LocalController daemon as a library class, so tests run a whole LC in-process and main.cc
// stays wiring only.
//
//   Create  validates the configuration and TLS files and opens the database (claiming it for the
//           node: another node's database is refused). Nothing runs yet.
//   Start   restore -> monitor -> keeper -> REST -> cloud link, in this order:
//           1. every desired object in the database goes to its handler (datasets with their
//              checkpoints and last results, models with their last checks), so the LC keeps
//              working while the cloud is away, also after a restart with no GM reachable;
//           2. the dataset monitor and the model keeper start counting/verifying;
//           3. the REST server takes worker reports and operator calls;
//           4. the cloud link dials the GM: changes are committed to the database, then applied
//              (DispatchingStore), then ACKed; reports leave the outbox, which every producer
//              fills in one transaction with its result and wakes the link.
//   Stop    the reverse (link, REST, keeper, monitor); the database closes with the object.
//
// Thread-safety: Start/Stop from one thread; the accessors from any thread.

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/time/backoff.h"
#include "common/time/clock.h"
#include "localcontroller/cloudlink/cloud_link.h"
#include "localcontroller/config.h"
#include "localcontroller/db/lc_database.h"
#include "localcontroller/s3/curl_s3_client.h"

namespace nereid::lc {

namespace dataset {
class DatasetMonitor;
}
namespace model {
class ModelKeeper;
}
namespace worker {
class WorkerIntake;
}
namespace server {
class LcServer;
}
class DatasetHandler;
class ModelHandler;
class DispatchingStore;
class DaemonStateView;
class LcDbDesiredStateStore;
class LcDbReportSource;
class WorkerReportSink;
namespace trigger {
class JobManager;
}

// The version the LC reports in its Hello and /api/v1/status.
std::string LcVersion();

// Knobs that are not configuration (tests tune them).
struct DaemonOptions {
  Clock* clock = Clock::Real();
  // Debounce of change-triggered rescans of one dataset.
  absl::Duration dataset_min_interval = absl::Seconds(1);
  bool watch_datasets = true;
  std::optional<ExponentialBackoff::Options> link_backoff;
  std::function<double()> link_jitter_source;
  absl::Duration model_retry_delay = absl::Seconds(1);
};

class Daemon {
 public:
  static absl::StatusOr<std::unique_ptr<Daemon>> Create(LcConfig config,
                                                        DaemonOptions options = {});
  ~Daemon();  // Stop()
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Restores and starts everything (see above). Fails when the REST listener cannot be bound; what
  // was started is stopped again.
  absl::Status Start();
  // Idempotent.
  void Stop();

  // Whether Start() completed and Stop() has not begun (what /readyz reports).
  bool running() const;
  // The REST listener's "http://HOST:PORT" and port (after Start).
  std::string url() const;
  int port() const;
  LinkStatus link_status() const;
  db::LcDatabase& db() { return *db_; }
  dataset::DatasetMonitor& monitor() { return *monitor_; }
  const s3::CurlS3Client& s3_client() const { return *s3_client_; }
  model::ModelKeeper& keeper() { return *keeper_; }
  worker::WorkerIntake& intake() { return *intake_; }
  const LcConfig& config() const { return config_; }

 private:
  Daemon(LcConfig config, DaemonOptions options);
  absl::Status Init();
  absl::Status Restore();

  const LcConfig config_;
  const DaemonOptions options_;
  const absl::Time created_;

  std::unique_ptr<db::LcDatabase> db_;
  std::unique_ptr<LcDbDesiredStateStore> durable_store_;
  std::unique_ptr<LcDbReportSource> report_source_;
  std::shared_ptr<const s3::CurlS3Client> s3_client_;
  std::unique_ptr<dataset::DatasetMonitor> monitor_;
  std::unique_ptr<model::ModelKeeper> keeper_;
  std::unique_ptr<DatasetHandler> dataset_handler_;
  std::unique_ptr<ModelHandler> model_handler_;
  // IncrementalLearningJob / LifelongLearningJob: triggers and the LC half of their stages.
  std::unique_ptr<trigger::JobManager> job_manager_;
  std::unique_ptr<DispatchingStore> store_;
  std::unique_ptr<WorkerReportSink> worker_sink_;
  std::unique_ptr<worker::WorkerIntake> intake_;
  std::unique_ptr<DaemonStateView> view_;
  std::unique_ptr<server::LcServer> server_;
  std::unique_ptr<CloudLink> link_;

  mutable absl::Mutex mu_;
  bool running_ ABSL_GUARDED_BY(mu_) = false;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace nereid::lc
