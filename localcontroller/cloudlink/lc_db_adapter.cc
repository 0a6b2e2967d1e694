#include "localcontroller/cloudlink/lc_db_adapter.h"

#include "absl/strings/str_cat.h"
#include "common/log/log.h"
#include "common/net/edge_protocol.h"
#include "common/status/macros.h"

namespace nereid::lc {

namespace v1 = edge::v1;

db::ObjectRef ToDbRef(const v1::ObjectRef& ref) {
  return db::ObjectRef{ref.kind(), ref.namespace_(), ref.name(), ref.uid()};
}

v1::ObjectRef FromDbRef(const db::ObjectRef& ref) {
  v1::ObjectRef out;
  out.set_kind(ref.kind);
  out.set_namespace_(ref.ns);
  out.set_name(ref.name);
  out.set_uid(ref.uid);
  return out;
}

absl::StatusOr<EncodedReport> EncodeReport(const v1::StatusReport& report) {
  RETURN_IF_ERROR(net::ValidateRef(report.ref()));
  EncodedReport encoded;
  encoded.key.object = ToDbRef(report.ref());
  switch (report.payload_case()) {
    case v1::StatusReport::kDataset: encoded.key.report_type = db::kReportDatasetStatus; break;
    case v1::StatusReport::kModel: encoded.key.report_type = db::kReportModelStatus; break;
    case v1::StatusReport::kWorker:
      encoded.key.report_type = db::kReportWorker;
      encoded.key.sub_key = report.worker().worker_name();
      break;
    case v1::StatusReport::kTrigger:
      encoded.key.report_type = db::kReportTrigger;
      encoded.key.sub_key = report.trigger().stage();
      break;
    case v1::StatusReport::PAYLOAD_NOT_SET:
      return absl::InvalidArgumentError(
          absl::StrCat("report about ", net::RefString(report.ref()), " has no payload"));
  }
  encoded.observed_version = report.observed_version();
  v1::StatusReport stored = report;
  stored.clear_seq();
  encoded.payload = stored.SerializeAsString();
  return encoded;
}

absl::StatusOr<int64_t> EnqueueReport(db::LcDatabase& db, const v1::StatusReport& report) {
  ASSIGN_OR_RETURN(EncodedReport encoded, EncodeReport(report));
  return db.Enqueue(encoded.key, encoded.observed_version, encoded.payload);
}

absl::StatusOr<v1::StatusReport> DecodeReport(const db::OutboxEntry& entry) {
  v1::StatusReport report;
  if (!report.ParseFromString(entry.payload)) {
    return absl::DataLossError(absl::StrCat("outbox entry ", entry.seq, " (",
                                            entry.key.DebugString(),
                                            "): payload is not a StatusReport"));
  }
  report.set_seq(static_cast<uint64_t>(entry.seq));
  *report.mutable_ref() = FromDbRef(entry.key.object);
  report.set_observed_version(entry.observed_version);
  return report;
}

absl::StatusOr<v1::Resource> DecodeDesiredObject(const db::DesiredObject& object) {
  v1::Resource resource;
  if (!resource.ParseFromString(object.spec)) {
    return absl::DataLossError(
        absl::StrCat(object.ref.DebugString(), ": stored spec is not a Resource"));
  }
  return resource;
}

absl::StatusOr<std::vector<v1::InventoryItem>> LcDbDesiredStateStore::Inventory() {
  ASSIGN_OR_RETURN(std::vector<db::InventoryEntry> entries, db_->Inventory());
  std::vector<v1::InventoryItem> items;
  items.reserve(entries.size());
  for (const db::InventoryEntry& entry : entries) {
    v1::InventoryItem item;
    *item.mutable_ref() = FromDbRef(entry.ref);
    item.set_version(entry.version);
    items.push_back(std::move(item));
  }
  return items;
}

absl::Status LcDbDesiredStateStore::Upsert(const v1::Resource& resource) {
  return db_->Upsert(ToDbRef(resource.ref()), resource.version(), resource.SerializeAsString());
}

absl::Status LcDbDesiredStateStore::Remove(const v1::ObjectRef& ref) {
  return db_->Delete(ToDbRef(ref)).status();
}

absl::Status LcDbDesiredStateStore::RecordSync(absl::Time time) { return db_->SetLastSync(time); }

absl::StatusOr<std::vector<v1::StatusReport>> LcDbReportSource::Pending(int limit,
                                                                        uint64_t after_seq) {
  ASSIGN_OR_RETURN(std::vector<db::OutboxEntry> entries,
                   db_->Pending(limit, static_cast<int64_t>(after_seq)));
  std::vector<v1::StatusReport> reports;
  reports.reserve(entries.size());
  for (const db::OutboxEntry& entry : entries) {
    absl::StatusOr<v1::StatusReport> report = DecodeReport(entry);
    if (!report.ok()) {
      // Cannot ever be sent: drop it rather than block the outbox behind it.
      LOG(ERROR) << "cloud link: " << report.status() << "; dropping it";
      if (absl::StatusOr<bool> dropped = db_->Reject(entry.seq, "undecodable payload");
          !dropped.ok()) {
        LOG(ERROR) << "cloud link: dropping outbox entry " << entry.seq << ": " << dropped.status();
      }
      continue;
    }
    reports.push_back(*std::move(report));
  }
  return reports;
}

absl::Status LcDbReportSource::Ack(uint64_t seq) {
  return db_->Ack(static_cast<int64_t>(seq)).status();
}

absl::Status LcDbReportSource::Reject(uint64_t seq, std::string_view reason) {
  return db_->Reject(static_cast<int64_t>(seq), reason).status();
}

void LcDbReportSource::SetWakeup(std::function<void()> wakeup) {
  db_->SetOutboxListener(std::move(wakeup));
}

}  // namespace nereid::lc
