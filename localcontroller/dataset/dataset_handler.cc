#include "localcontroller/dataset/dataset_handler.h"

#include "common/failpoint/failpoint.h"
#include "common/log/log.h"
#include "common/net/edge_protocol.h"
#include "common/status/macros.h"
#include "localcontroller/dataset/errors.h"
#include "localcontroller/report_writer.h"
#include "common/net/storage_credential.h"

namespace nereid::lc {
namespace {

dataset::DatasetSpec SpecOf(const edge::v1::Resource& resource) {
  const edge::v1::DatasetSpec& spec = resource.dataset();
  return dataset::DatasetSpec{NsNameKey(resource.ref().namespace_(), resource.ref().name()),
                              spec.url(), spec.format(),
                              net::S3CredentialOf(spec.url(), spec.has_s3_credential(),
                                                  spec.s3_credential())};
}

}  // namespace

std::string NsNameKey(const std::string& ns, const std::string& name) { return ns + "/" + name; }

NsName SplitNsNameKey(const std::string& key) {
  const size_t slash = key.find('/');
  if (slash == std::string::npos) return {"", key};
  return {key.substr(0, slash), key.substr(slash + 1)};
}

bool DatasetHandler::Recreated(const std::string& key, const std::string& uid) {
  absl::MutexLock lock(&mu_);
  auto [it, inserted] = uids_.try_emplace(key, uid);
  if (inserted || it->second == uid) return false;
  it->second = uid;
  return true;
}

void DatasetHandler::Apply(const edge::v1::Resource& resource) {
  if (!resource.has_dataset()) return;  // validated by the link; nothing to monitor otherwise
  const dataset::DatasetSpec spec = SpecOf(resource);
  if (Recreated(spec.key, resource.ref().uid())) {
    LOG(INFO) << "dataset " << spec.key << ": re-created (uid " << resource.ref().uid()
              << "), counting afresh";
    monitor_->Remove(spec.key);
  }
  monitor_->Upsert(spec);
}

void DatasetHandler::Restore(const edge::v1::Resource& resource) {
  if (!resource.has_dataset()) return;
  const std::string& ns = resource.ref().namespace_();
  const std::string& name = resource.ref().name();
  dataset::DatasetMonitor::Prior prior;
  absl::StatusOr<std::vector<db::FileCheckpoint>> files = db_->FileCheckpoints(ns, name);
  if (files.ok()) {
    for (const db::FileCheckpoint& file : *files) {
      if (file.path == kDatasetCheckpointPath) prior.checkpoint = file.data;
    }
  } else {
    LOG(WARNING) << "dataset " << ns << "/" << name
                 << ": reading its checkpoint failed, recounting: " << files.status();
  }
  absl::StatusOr<db::DatasetResult> result = db_->GetDatasetResult(ns, name);
  if (result.ok()) {
    dataset::ReportedState state;
    state.ok = result->error_reason.empty();
    if (state.ok) {
      state.count = static_cast<uint64_t>(result->count.value_or(0));
    } else {
      state.reason = result->error_reason;
      state.message = result->error_message;
    }
    prior.reported = state;
  } else if (!absl::IsNotFound(result.status())) {
    LOG(WARNING) << "dataset " << ns << "/" << name << ": reading its last result failed: "
                 << result.status();
  }
  Recreated(NsNameKey(ns, name), resource.ref().uid());
  monitor_->Upsert(SpecOf(resource), std::move(prior));
}

void DatasetHandler::Forget(const edge::v1::ObjectRef& ref) {
  const std::string key = NsNameKey(ref.namespace_(), ref.name());
  monitor_->Remove(key);
  absl::MutexLock lock(&mu_);
  uids_.erase(key);
}

absl::Status DatasetHandler::OnReport(const dataset::ScanReport& scan) {
  failpoint::Hit(failpoint::kLcDatasetBeforeReport);  // crash tests: checkpoint stored, result not
  const NsName ref = SplitNsNameKey(scan.spec.key);
  edge::v1::StatusReport report;
  report.mutable_ref()->set_kind(std::string(net::kKindDataset));
  report.mutable_ref()->set_namespace_(ref.ns);
  report.mutable_ref()->set_name(ref.name);
  edge::v1::DatasetStatus* status = report.mutable_dataset();
  *status->mutable_update_time() = net::ToProtoTime(scan.scan_time);
  db::DatasetResult result;
  result.scanned_at = scan.scan_time;
  if (scan.status.ok()) {
    status->set_number_of_samples(static_cast<int64_t>(scan.count));
    result.count = static_cast<int64_t>(scan.count);
  } else {
    result.error_reason = dataset::ReasonOf(scan.status);
    result.error_message = std::string(scan.status.message());
    status->set_error_reason(result.error_reason);
    status->set_error_message(result.error_message);
  }
  absl::Status written = db_->Write([&](db::LcDatabase::Tables& tables) -> absl::Status {
    RETURN_IF_ERROR(StampFromDesired(tables, report));
    if (!scan.status.ok()) {
      // The last good count stays stored beside the error (the REST API shows it as stale); the
      // GM likewise keeps status.numberOfSamples and sets the Counted condition to False.
      absl::StatusOr<db::DatasetResult> before = tables.datasets.GetResult(ref.ns, ref.name);
      if (before.ok()) result.count = before->count;
    }
    RETURN_IF_ERROR(tables.datasets.PutResult(ref.ns, ref.name, result));
    return EnqueueInTransaction(tables, report);
  });
  if (absl::IsNotFound(written)) {
    LOG(DEBUG) << "dataset " << scan.spec.key << ": deleted meanwhile, result dropped";
    return absl::OkStatus();
  }
  if (!written.ok()) {
    LOG(ERROR) << "dataset " << scan.spec.key << ": storing the result failed: " << written;
  }
  return written;
}

absl::Status DatasetHandler::OnCheckpoint(const std::string& key, const std::string& data) {
  failpoint::Hit(failpoint::kLcDatasetBeforeCheckpoint);  // crash tests: counted, nothing stored
  const NsName ref = SplitNsNameKey(key);
  absl::Status written = db_->PutFileCheckpoint(ref.ns, ref.name, kDatasetCheckpointPath, data);
  if (absl::IsNotFound(written)) {
    LOG(DEBUG) << "dataset " << key << ": deleted meanwhile, checkpoint dropped";
    return absl::OkStatus();
  }
  if (!written.ok()) {
    LOG(WARNING) << "dataset " << key << ": storing the checkpoint failed: " << written;
  }
  return written;
}

}  // namespace nereid::lc
