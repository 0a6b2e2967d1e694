#include "localcontroller/daemon.h"

#include <utility>

#include "absl/memory/memory.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/http/http_listener.h"
#include "common/log/log.h"
#include "common/net/edge_protocol.h"
#include "common/status/macros.h"
#include "common/version/version.h"
#include "localcontroller/cloudlink/lc_db_adapter.h"
#include "localcontroller/daemon_state_view.h"
#include "localcontroller/dataset/data_roots.h"
#include "localcontroller/dataset/dataset_monitor.h"
#include "localcontroller/dataset/dataset_handler.h"
#include "localcontroller/dispatching_store.h"
#include "localcontroller/model/model_keeper.h"
#include "localcontroller/model/model_handler.h"
#include "localcontroller/node_summary.h"
#include "localcontroller/trigger/job_manager.h"
#include "localcontroller/server/lc_server.h"
#include "localcontroller/worker/worker_intake.h"
#include "localcontroller/worker_report_sink.h"

namespace nereid::lc {

std::string LcVersion() { return "nereid-lc/" + std::string(version::Release()); }

Daemon::Daemon(LcConfig config, DaemonOptions options)
    : config_(std::move(config)), options_(std::move(options)), created_(options_.clock->Now()) {}

absl::StatusOr<std::unique_ptr<Daemon>> Daemon::Create(LcConfig config, DaemonOptions options) {
  RETURN_IF_ERROR(ValidateConfig(config));
  auto daemon = absl::WrapUnique(new Daemon(std::move(config), std::move(options)));
  RETURN_IF_ERROR(daemon->Init());
  return daemon;
}

absl::Status Daemon::Init() {
  db::LcDatabase::Options db_options;
  db_options.path = config_.db_path;
  db_options.node_name = config_.node_name;
  db_options.clock = options_.clock;
  // A corrupt file is moved aside: the GM resends the desired state and the scanners re-report.
  db_options.on_corruption = db::LcDatabase::OnCorruption::kMoveAside;
  absl::StatusOr<std::unique_ptr<db::LcDatabase>> db = db::LcDatabase::Open(db_options);
  if (!db.ok()) {
    return absl::Status(db.status().code(),
                        absl::StrCat("database ", config_.db_path, ": ", db.status().message()));
  }
  db_ = std::move(*db);
  durable_store_ = std::make_unique<LcDbDesiredStateStore>(db_.get());
  report_source_ = std::make_unique<LcDbReportSource>(db_.get());

  // One S3 client for datasets and models; backoff between its retries runs on real time.
  s3::CurlS3Options s3_options;
  s3_options.ca_file = config_.s3_ca_file;
  s3_options.addressing = ::nereid::s3::ParseAddressing(config_.s3_addressing)
                              .value_or(::nereid::s3::Addressing::kAuto);
  s3_client_ = std::make_shared<lc::s3::CurlS3Client>(std::move(s3_options));

  const dataset::DataRoots data_roots(config_.data_roots);
  dataset::DatasetMonitor::Options monitor_options;
  monitor_options.counter.host_root = config_.host_root;
  monitor_options.counter.data_roots = data_roots;
  monitor_options.counter.s3 = s3_client_;
  monitor_options.counter.clock = options_.clock;
  monitor_options.period = config_.scan_period;
  monitor_options.min_interval = options_.dataset_min_interval;
  monitor_options.clock = options_.clock;
  monitor_options.watch = options_.watch_datasets;
  // The handler exists before the monitor starts; callbacks reach it through the daemon.
  monitor_options.on_report = [this](const dataset::ScanReport& report) {
    return dataset_handler_->OnReport(report);
  };
  monitor_options.on_checkpoint = [this](const std::string& key, const std::string& data) {
    return dataset_handler_->OnCheckpoint(key, data);
  };
  monitor_ = std::make_unique<dataset::DatasetMonitor>(std::move(monitor_options));

  model::ModelKeeper::Options keeper_options;
  keeper_options.verifier.host_root = config_.host_root;
  keeper_options.verifier.data_roots = data_roots;
  keeper_options.verifier.clock = options_.clock;
  keeper_options.verifier.s3 = s3_client_;
  keeper_options.check_period = config_.model_check_period;
  keeper_options.http_check_period = config_.model_http_check_period;
  keeper_options.retry_delay = options_.model_retry_delay;
  keeper_options.clock = options_.clock;
  keeper_options.on_report = [this](const model::ModelReport& report) {
    return model_handler_->OnReport(report);
  };
  keeper_ = std::make_unique<model::ModelKeeper>(std::move(keeper_options));

  dataset_handler_ = std::make_unique<DatasetHandler>(db_.get(), monitor_.get());
  model_handler_ = std::make_unique<ModelHandler>(db_.get(), keeper_.get());
  store_ = std::make_unique<DispatchingStore>(durable_store_.get());
  store_->SetHandler(std::string(net::kKindDataset), dataset_handler_.get());
  store_->SetHandler(std::string(net::kKindModel), model_handler_.get());
  trigger::JobManager::Options jobs_options;
  jobs_options.db = db_.get();
  jobs_options.node_name = config_.node_name;
  jobs_options.host_root = config_.host_root;
  jobs_options.data_roots = data_roots;
  jobs_options.clock = options_.clock;
  jobs_options.dataset_count = [this](const std::string& key) -> std::optional<uint64_t> {
    std::optional<dataset::ScanReport> last = monitor_->Last(key);
    if (!last.has_value() || !last->status.ok()) return std::nullopt;
    return last->count;
  };
  job_manager_ = std::make_unique<trigger::JobManager>(std::move(jobs_options));
  store_->SetHandler(std::string(net::kKindIncrementalLearningJob), job_manager_.get());
  store_->SetHandler(std::string(net::kKindLifelongLearningJob), job_manager_.get());

  worker_sink_ = std::make_unique<WorkerReportSink>(db_.get());
  worker::WorkerIntake::Options intake_options;
  intake_options.sink = worker_sink_.get();
  intake_options.clock = options_.clock;
  intake_ = std::make_unique<worker::WorkerIntake>(intake_options);
  view_ = std::make_unique<DaemonStateView>(this, created_);

  CloudLinkOptions link_options;
  link_options.gm_address = config_.gm_address;
  link_options.node_name = config_.node_name;
  link_options.tls = config_.tls;
  link_options.lc_version = std::string(version::Release());
  link_options.lc_commit = std::string(version::Commit());
  link_options.node_summary = [this] { return ReadNodeSummary(*view_, db_->write_health()); };
  link_options.clock = options_.clock;
  link_options.keepalive.time = config_.keepalive_time;
  link_options.keepalive.timeout = config_.keepalive_timeout;
  if (options_.link_backoff.has_value()) link_options.backoff = *options_.link_backoff;
  link_options.jitter_source = options_.link_jitter_source;
  ASSIGN_OR_RETURN(link_, CloudLink::Create(std::move(link_options), store_.get(),
                                            report_source_.get()));
  return absl::OkStatus();
}

Daemon::~Daemon() { Stop(); }

absl::Status Daemon::Restore() {
  ASSIGN_OR_RETURN(std::vector<db::InventoryEntry> inventory, db_->Inventory());
  size_t restored = 0;
  for (const db::InventoryEntry& entry : inventory) {
    ResourceHandler* handler = store_->HandlerFor(entry.ref.kind);
    if (handler == nullptr) continue;  // stored and ACKed only (see resource_handler.h)
    absl::StatusOr<db::DesiredObject> object = db_->Get(entry.ref);
    if (!object.ok()) {
      LOG(WARNING) << "restore: " << entry.ref.DebugString() << ": " << object.status();
      continue;
    }
    absl::StatusOr<edge::v1::Resource> resource = DecodeDesiredObject(*object);
    if (!resource.ok()) {
      // Left in the database: the next sync sends the GM's version, which replaces it.
      LOG(ERROR) << "restore: " << resource.status() << "; waiting for the GM to resend it";
      continue;
    }
    // Datasets and models come back with what the database remembers about them.
    if (handler == dataset_handler_.get()) {
      dataset_handler_->Restore(*resource);
    } else if (handler == model_handler_.get()) {
      model_handler_->Restore(*resource);
    } else {
      handler->Apply(*resource);
    }
    ++restored;
  }
  LOG(INFO) << "localcontroller: " << inventory.size() << " objects in " << config_.db_path << ", "
            << restored << " handed to their handlers (" << monitor_->size() << " datasets, "
            << keeper_->size() << " models)";
  return absl::OkStatus();
}

absl::Status Daemon::Start() {
  {
    absl::MutexLock lock(&mu_);
    if (started_) return absl::FailedPreconditionError("the daemon was already started");
    started_ = true;
  }
  LOG(INFO) << "localcontroller " << LcVersion() << ": node " << config_.node_name << ", GM "
            << config_.gm_address << ", host root " << config_.host_root << ", data roots "
            << (config_.data_roots.empty() ? "(all of it)" : absl::StrJoin(config_.data_roots, ","))
            << ", database " << config_.db_path;
  RETURN_IF_ERROR(Restore());
  monitor_->Start();
  keeper_->Start();
  job_manager_->Start();

  server::ServerOptions server_options;
  server_options.listen = config_.listen;
  server_options.metrics_listen = config_.metrics_listen;
  server_options.max_body_bytes = config_.max_request_bytes;
  server_options.threads = config_.http_threads;
  server_options.max_connections = static_cast<unsigned>(config_.http_max_connections);
  if (absl::StatusOr<unsigned long> files = http::RaiseOpenFileLimit(); !files.ok()) {
    LOG(WARNING) << "lc server: " << files.status().message();
  } else if (*files < static_cast<unsigned long>(config_.http_max_connections) + 256) {
    LOG(WARNING) << "lc server: the open-file limit " << *files << " is below --http-max-connections "
                 << config_.http_max_connections << " + 256; new connections beyond it are refused";
  }
  absl::StatusOr<std::unique_ptr<server::LcServer>> server =
      server::LcServer::Start(server_options, view_.get(), intake_.get());
  if (!server.ok()) {
    job_manager_->Stop();
    keeper_->Stop();
    monitor_->Stop();
    return absl::Status(server.status().code(),
                        absl::StrCat("REST listener (--listen ", config_.listen,
                                     "): ", server.status().message()));
  }
  server_ = std::move(*server);
  link_->Start();
  absl::MutexLock lock(&mu_);
  running_ = true;
  return absl::OkStatus();
}

void Daemon::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stopped_ || !started_) {
      stopped_ = true;
      return;
    }
    stopped_ = true;
    running_ = false;
  }
  LOG(INFO) << "localcontroller: stopping";
  link_->Stop();
  if (server_) server_->Stop();
  job_manager_->Stop();
  keeper_->Stop();
  monitor_->Stop();
  LOG(INFO) << "localcontroller: stopped";
}

bool Daemon::running() const {
  absl::MutexLock lock(&mu_);
  return running_;
}

std::string Daemon::url() const { return server_ ? server_->url() : ""; }

int Daemon::port() const { return server_ ? server_->port() : 0; }

LinkStatus Daemon::link_status() const { return link_->status(); }

}  // namespace nereid::lc
