#include "localcontroller/daemon_state_view.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/log/log.h"
#include "common/net/edge_protocol.h"
#include "common/status/macros.h"
#include "common/strings/absl_compat.h"
#include "common/version/build_info.h"
#include "localcontroller/cloudlink/lc_db_adapter.h"
#include "localcontroller/daemon.h"
#include "localcontroller/dataset/dataset_monitor.h"
#include "localcontroller/dataset/errors.h"
#include "localcontroller/dataset/dataset_handler.h"
#include "localcontroller/model/check_codec.h"
#include "localcontroller/model/model_keeper.h"
#include "localcontroller/model/model_handler.h"
#include "localcontroller/worker/worker_intake.h"

namespace nereid::lc {
namespace {

using server::DatasetInfo;
using server::ModelInfo;

// A Dataset from the database (spec and persisted result) ...
absl::StatusOr<DatasetInfo> DatasetFromDb(db::LcDatabase::Tables& tables,
                                          const db::DesiredObject& object) {
  DatasetInfo info;
  info.ns = object.ref.ns;
  info.name = object.ref.name;
  info.uid = object.ref.uid;
  info.version = object.version;
  ASSIGN_OR_RETURN(edge::v1::Resource resource, DecodeDesiredObject(object));
  info.url = resource.dataset().url();
  info.format = resource.dataset().format();
  info.node_name = resource.dataset().node_name();
  info.credential_name = resource.dataset().credential_name();
  info.credential_received = resource.dataset().has_s3_credential();
  absl::StatusOr<db::DatasetResult> result = tables.datasets.GetResult(info.ns, info.name);
  if (result.ok()) {
    info.scanned = true;
    info.count = result->count;
    info.last_scan = result->scanned_at;
    info.error_reason = result->error_reason;
    info.error_message = result->error_message;
    info.stale = !info.error_reason.empty() && info.count.has_value();
  } else if (!absl::IsNotFound(result.status())) {
    return result.status();
  }
  return info;
}

// ... updated with the monitor's latest scan of this run, if any.
void MergeScan(const dataset::DatasetMonitor& monitor, DatasetInfo& info) {
  std::optional<dataset::ScanReport> last = monitor.Last(NsNameKey(info.ns, info.name));
  if (!last.has_value()) return;
  info.scanned = true;
  info.last_scan = last->scan_time;
  if (last->status.ok()) {
    info.count = static_cast<int64_t>(last->count);
    info.error_reason.clear();
    info.error_message.clear();
    info.stale = false;
  } else {
    // The count from the database stays: the last good one, marked stale.
    info.error_reason = dataset::ReasonOf(last->status);
    info.error_message = std::string(last->status.message());
    info.stale = info.count.has_value();
  }
}

void ApplyCheck(const model::Check& check, absl::Time when, ModelInfo& info) {
  info.checked = true;
  info.present = check.present;
  info.verified = check.verified;
  info.sha256 = check.sha256;
  info.size = check.size;
  info.last_check = when;
  info.error_reason = check.reason;
  info.error_message = check.message;
}

absl::StatusOr<ModelInfo> ModelFromDb(db::LcDatabase::Tables& tables,
                                      const db::DesiredObject& object) {
  ModelInfo info;
  info.ns = object.ref.ns;
  info.name = object.ref.name;
  info.uid = object.ref.uid;
  info.version = object.version;
  ASSIGN_OR_RETURN(edge::v1::Resource resource, DecodeDesiredObject(object));
  info.url = resource.model().url();
  info.format = resource.model().format();
  info.expected_sha256 = resource.model().sha256();
  info.credential_name = resource.model().credential_name();
  info.credential_received = resource.model().has_s3_credential();
  ASSIGN_OR_RETURN(std::optional<std::string> stored,
                   tables.meta.Get(ModelHandler::MetaKey(info.ns, info.name)));
  if (stored.has_value()) {
    absl::StatusOr<model::Check> check = model::ParseCheck(*stored);
    if (check.ok()) ApplyCheck(*check, absl::InfinitePast(), info);
  }
  return info;
}

void MergeCheck(const model::ModelKeeper& keeper, ModelInfo& info) {
  std::optional<model::ModelReport> last = keeper.Last(NsNameKey(info.ns, info.name));
  if (last.has_value()) ApplyCheck(last->check, last->check_time, info);
}

db::ObjectRef RefOf(std::string_view kind, std::string_view ns, std::string_view name) {
  return db::ObjectRef{std::string(kind), std::string(ns), std::string(name), ""};
}

// ---- metrics

prometheus::MetricFamily Family(std::string name, std::string help, prometheus::MetricType type) {
  prometheus::MetricFamily family;
  family.name = std::move(name);
  family.help = std::move(help);
  family.type = type;
  return family;
}

void AddSample(prometheus::MetricFamily& family, double value,
               std::vector<std::pair<std::string, std::string>> labels = {}) {
  prometheus::ClientMetric metric;
  for (auto& [name, label_value] : labels) metric.label.push_back({name, label_value});
  if (family.type == prometheus::MetricType::Counter) {
    metric.counter.value = value;
  } else {
    metric.gauge.value = value;
  }
  family.metric.push_back(std::move(metric));
}

prometheus::MetricFamily Gauge(std::string name, std::string help, double value) {
  prometheus::MetricFamily family = Family(std::move(name), std::move(help),
                                           prometheus::MetricType::Gauge);
  AddSample(family, value);
  return family;
}

prometheus::MetricFamily Counter(std::string name, std::string help, double value) {
  prometheus::MetricFamily family = Family(std::move(name), std::move(help),
                                           prometheus::MetricType::Counter);
  AddSample(family, value);
  return family;
}

// A gauge with one series (value 1) per tracked object whose last result `reason_of` names a
// failure ("" = fine), labelled namespace, name and reason: none while all are fine, so an alert
// names exactly what fails.
// `Tracker` is the DatasetMonitor or the ModelKeeper: Specs() and Last(key).
template <typename Tracker, typename ReasonOf>
prometheus::MetricFamily FailingObjects(std::string name, std::string help,
                                        const Tracker& tracker, const ReasonOf& reason_of) {
  prometheus::MetricFamily family = Family(std::move(name), std::move(help),
                                           prometheus::MetricType::Gauge);
  for (const auto& spec : tracker.Specs()) {
    const auto last = tracker.Last(spec.key);
    if (!last.has_value()) continue;
    std::string reason = reason_of(*last);
    if (reason.empty()) continue;
    NsName object = SplitNsNameKey(spec.key);
    AddSample(family, 1,
              {{"namespace", std::move(object.ns)},
               {"name", std::move(object.name)},
               {"reason", std::move(reason)}});
  }
  return family;
}

}  // namespace

absl::Status DaemonStateView::Ready() {
  if (!daemon_->running()) {
    return absl::UnavailableError("the LocalController is starting or stopping");
  }
  // Reports and desired objects cannot be stored: nothing is lost (the scanner reports again, the
  // GM resends), but the node is not doing its job and the operator has to free space.
  const db::LcDatabase::WriteHealth db = daemon_->db().write_health();
  if (!db.error.ok()) {
    return absl::UnavailableError(absl::StrCat(
        "database writes failing since ", absl::FormatTime(absl::RFC3339_sec, db.failing_since,
                                                           absl::UTCTimeZone()),
        " (disk full?): ", db.error.message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<server::StatusInfo> DaemonStateView::Status() {
  server::StatusInfo info;
  const LcConfig& config = daemon_->config();
  info.node = config.node_name;
  info.version = LcVersion();
  info.gm_address = config.gm_address;
  info.started = started_;
  const LinkStatus link = daemon_->link_status();
  info.link.state = std::string(LinkStateName(link.state));
  info.link.synced = link.synced;
  info.link.last_connected = link.last_connected;
  info.link.last_sync = link.last_sync;
  info.link.last_error = link.last_error;
  info.link.last_error_at = link.last_error_at;
  info.link.next_attempt = link.next_attempt;
  info.link.attempts = link.attempts;
  info.link.server = link.server;
  info.link.redirects = link.redirects;
  info.link.changes_applied = link.changes_applied;
  info.link.changes_nacked = link.changes_nacked;
  info.link.reports_sent = link.reports_sent;
  info.link.reports_acked = link.reports_acked;
  info.link.reports_rejected = link.reports_rejected;
  info.link.reports_retried = link.reports_retried;
  if (info.link.last_sync == absl::InfinitePast()) {
    // Not synced in this run: the last sync before the restart.
    ASSIGN_OR_RETURN(std::optional<absl::Time> last_sync, daemon_->db().LastSync());
    if (last_sync.has_value()) info.link.last_sync = *last_sync;
  }
  ASSIGN_OR_RETURN(info.outbox_depth, daemon_->db().OutboxDepth());
  ASSIGN_OR_RETURN(std::vector<db::InventoryEntry> inventory, daemon_->db().Inventory());
  info.objects = inventory.size();
  for (const db::InventoryEntry& entry : inventory) {
    if (entry.ref.kind == net::kKindDataset) ++info.datasets;
    if (entry.ref.kind == net::kKindModel) ++info.models;
  }
  info.workers = daemon_->intake().size();
  return info;
}

absl::StatusOr<std::vector<DatasetInfo>> DaemonStateView::Datasets() {
  std::vector<DatasetInfo> out;
  RETURN_IF_ERROR(daemon_->db().Read([&](db::LcDatabase::Tables& tables) -> absl::Status {
    ASSIGN_OR_RETURN(std::vector<db::DesiredObject> objects, tables.desired.List(db::kDatasetKind));
    out.reserve(objects.size());
    for (const db::DesiredObject& object : objects) {
      absl::StatusOr<DatasetInfo> info = DatasetFromDb(tables, object);
      if (!info.ok()) {
        LOG(WARNING) << "operator api: " << object.ref.DebugString() << ": " << info.status();
        continue;
      }
      out.push_back(*std::move(info));
    }
    return absl::OkStatus();
  }));
  // The monitor's lock is taken only after the database's was released.
  for (DatasetInfo& info : out) MergeScan(daemon_->monitor(), info);
  return out;
}

absl::StatusOr<DatasetInfo> DaemonStateView::Dataset(std::string_view ns, std::string_view name) {
  DatasetInfo out;
  RETURN_IF_ERROR(daemon_->db().Read([&](db::LcDatabase::Tables& tables) -> absl::Status {
    absl::StatusOr<db::DesiredObject> object =
        tables.desired.Get(RefOf(net::kKindDataset, ns, name));
    if (absl::IsNotFound(object.status())) {
      return absl::NotFoundError(
          absl::StrCat("dataset ", ToAbsl(ns), "/", ToAbsl(name), " is not on this node"));
    }
    RETURN_IF_ERROR(object.status());
    ASSIGN_OR_RETURN(out, DatasetFromDb(tables, *object));
    return absl::OkStatus();
  }));
  MergeScan(daemon_->monitor(), out);
  return out;
}

absl::StatusOr<std::vector<ModelInfo>> DaemonStateView::Models() {
  std::vector<ModelInfo> out;
  RETURN_IF_ERROR(daemon_->db().Read([&](db::LcDatabase::Tables& tables) -> absl::Status {
    ASSIGN_OR_RETURN(std::vector<db::DesiredObject> objects,
                     tables.desired.List(std::string(net::kKindModel)));
    out.reserve(objects.size());
    for (const db::DesiredObject& object : objects) {
      absl::StatusOr<ModelInfo> info = ModelFromDb(tables, object);
      if (!info.ok()) {
        LOG(WARNING) << "operator api: " << object.ref.DebugString() << ": " << info.status();
        continue;
      }
      out.push_back(*std::move(info));
    }
    return absl::OkStatus();
  }));
  for (ModelInfo& info : out) MergeCheck(daemon_->keeper(), info);
  return out;
}

absl::StatusOr<ModelInfo> DaemonStateView::Model(std::string_view ns, std::string_view name) {
  ModelInfo out;
  RETURN_IF_ERROR(daemon_->db().Read([&](db::LcDatabase::Tables& tables) -> absl::Status {
    absl::StatusOr<db::DesiredObject> object =
        tables.desired.Get(RefOf(net::kKindModel, ns, name));
    if (absl::IsNotFound(object.status())) {
      return absl::NotFoundError(
          absl::StrCat("model ", ToAbsl(ns), "/", ToAbsl(name), " is not on this node"));
    }
    RETURN_IF_ERROR(object.status());
    ASSIGN_OR_RETURN(out, ModelFromDb(tables, *object));
    return absl::OkStatus();
  }));
  MergeCheck(daemon_->keeper(), out);
  return out;
}

std::vector<prometheus::MetricFamily> DaemonStateView::CollectMetrics() {
  using prometheus::MetricType;
  std::vector<prometheus::MetricFamily> families;
  families.push_back(version::BuildInfoFamily());

  if (absl::StatusOr<db::OutboxStats> outbox = daemon_->db().GetOutboxStats(); outbox.ok()) {
    families.push_back(Gauge("nereid_lc_outbox_depth",
                             "Reports in the outbox waiting for the GM's ACK", outbox->depth));
    prometheus::MetricFamily events =
        Family("nereid_lc_outbox_reports_total",
               "Outbox reports over the database's lifetime, by what happened to them",
               MetricType::Counter);
    AddSample(events, static_cast<double>(outbox->enqueued), {{"event", "enqueued"}});
    AddSample(events, static_cast<double>(outbox->replaced), {{"event", "replaced"}});
    AddSample(events, static_cast<double>(outbox->acked), {{"event", "acked"}});
    AddSample(events, static_cast<double>(outbox->rejected), {{"event", "rejected"}});
    families.push_back(std::move(events));
  } else {
    LOG(WARNING) << "metrics: outbox stats: " << outbox.status();
  }

  const db::LcDatabase::WriteHealth db = daemon_->db().write_health();
  families.push_back(Gauge("nereid_lc_database_write_failing",
                           "1 while writes to the LC database fail (disk full, I/O error)",
                           db.error.ok() ? 0 : 1));
  families.push_back(Counter("nereid_lc_database_write_failures_total",
                             "Writes to the LC database that failed for the storage",
                             static_cast<double>(db.failures)));

  const LinkStatus link = daemon_->link_status();
  prometheus::MetricFamily state =
      Family("nereid_lc_cloud_link_state", "1 for the cloud link's current state",
             MetricType::Gauge);
  for (LinkState s : {LinkState::kIdle, LinkState::kConnecting, LinkState::kConnected,
                      LinkState::kBackoff, LinkState::kStopped}) {
    AddSample(state, s == link.state ? 1 : 0, {{"state", std::string(LinkStateName(s))}});
  }
  families.push_back(std::move(state));
  families.push_back(Gauge("nereid_lc_cloud_link_synced",
                           "1 while the current stream has delivered the full difference",
                           link.synced ? 1 : 0));
  families.push_back(Counter("nereid_lc_cloud_link_streams_total",
                             "Sync streams started towards the GM", link.attempts));
  families.push_back(Counter("nereid_lc_cloud_link_redirects_total",
                             "Sync streams refused by a GM replica that named the one serving "
                             "this node, which was dialed next",
                             link.redirects));
  prometheus::MetricFamily reports =
      Family("nereid_lc_reports_total", "Upstream reports sent and how the GM answered them",
             MetricType::Counter);
  AddSample(reports, static_cast<double>(link.reports_sent), {{"result", "sent"}});
  AddSample(reports, static_cast<double>(link.reports_acked), {{"result", "acked"}});
  AddSample(reports, static_cast<double>(link.reports_rejected), {{"result", "rejected"}});
  AddSample(reports, static_cast<double>(link.reports_retried), {{"result", "retried"}});
  families.push_back(std::move(reports));
  prometheus::MetricFamily changes =
      Family("nereid_lc_changes_total", "Downstream changes applied (ACK) or refused (NACK)",
             MetricType::Counter);
  AddSample(changes, static_cast<double>(link.changes_applied), {{"result", "applied"}});
  AddSample(changes, static_cast<double>(link.changes_nacked), {{"result", "nacked"}});
  families.push_back(std::move(changes));

  const dataset::DatasetMonitor::Stats scans = daemon_->monitor().stats();
  families.push_back(Gauge("nereid_lc_datasets_tracked", "Datasets the LC counts",
                           static_cast<double>(daemon_->monitor().size())));
  prometheus::MetricFamily scan_duration =
      Family("nereid_lc_dataset_scan_duration_seconds", "Time spent counting datasets",
             MetricType::Summary);
  prometheus::ClientMetric scan_metric;
  scan_metric.summary.sample_count = scans.scans;
  scan_metric.summary.sample_sum = absl::ToDoubleSeconds(scans.scan_time);
  scan_duration.metric.push_back(std::move(scan_metric));
  families.push_back(std::move(scan_duration));
  families.push_back(Counter("nereid_lc_dataset_scan_bytes_total",
                             "Bytes read by dataset scans", static_cast<double>(scans.bytes_read)));
  families.push_back(Counter("nereid_lc_dataset_reports_total",
                             "Dataset results that changed and were reported",
                             static_cast<double>(scans.reports)));

  // Everything the S3 client moved, headers included: what polling unchanged objects costs.
  const s3::TransferStats s3_transfers = daemon_->s3_client().stats();
  families.push_back(Counter("nereid_lc_s3_requests_total", "Requests sent to S3 endpoints",
                             static_cast<double>(s3_transfers.requests)));
  prometheus::MetricFamily s3_bytes = Family(
      "nereid_lc_s3_bytes_total", "Bytes exchanged with S3 endpoints, headers included",
      MetricType::Counter);
  AddSample(s3_bytes, static_cast<double>(s3_transfers.bytes_received),
            {{"direction", "received"}});
  AddSample(s3_bytes, static_cast<double>(s3_transfers.bytes_sent), {{"direction", "sent"}});
  families.push_back(std::move(s3_bytes));

  families.push_back(FailingObjects(
      "nereid_lc_dataset_failing",
      "1 for each dataset whose last scan failed, with the reason (no series while it counts)",
      daemon_->monitor(),
      [](const dataset::ScanReport& scan) { return dataset::ReasonOf(scan.status); }));

  const model::ModelKeeper::Stats checks = daemon_->keeper().stats();
  families.push_back(Gauge("nereid_lc_models_tracked", "Models the LC verifies",
                           static_cast<double>(daemon_->keeper().size())));
  families.push_back(Counter("nereid_lc_model_checks_total", "Model checks finished",
                             static_cast<double>(checks.checks)));
  families.push_back(FailingObjects(
      "nereid_lc_model_failing",
      "1 for each model whose last check failed, with the reason (no series while it is fine)",
      daemon_->keeper(), [](const model::ModelReport& report) { return report.check.reason; }));
  families.push_back(Counter("nereid_lc_model_hashed_bytes_total",
                             "Bytes hashed to verify models",
                             static_cast<double>(checks.bytes_hashed)));

  const worker::WorkerIntake::Stats workers = daemon_->intake().stats();
  prometheus::MetricFamily worker_reports =
      Family("nereid_lc_worker_reports_total",
             "Worker reports received on POST /sedna/workers/{worker}/info, by outcome",
             MetricType::Counter);
  AddSample(worker_reports, static_cast<double>(workers.forwarded), {{"result", "forwarded"}});
  AddSample(worker_reports, static_cast<double>(workers.unknown_owner_kind),
            {{"result", "unknown_owner_kind"}});
  AddSample(worker_reports, static_cast<double>(workers.invalid), {{"result", "invalid"}});
  AddSample(worker_reports, static_cast<double>(workers.failed), {{"result", "failed"}});
  families.push_back(std::move(worker_reports));
  families.push_back(Counter("nereid_lc_worker_reports_attributed_total",
                             "Forwarded worker reports whose owner was found by the worker (the "
                             "report did not say its kind)",
                             static_cast<double>(workers.attributed)));
  families.push_back(Gauge("nereid_lc_workers_tracked", "Workers in the last-report table",
                           static_cast<double>(daemon_->intake().size())));
  return families;
}

}  // namespace nereid::lc
