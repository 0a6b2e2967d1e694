#pragma once

// The cloud link's seams over the LC's SQLite database (localcontroller/db):
//   - desired objects are stored with spec = the serialized edge.v1.Resource (ref and version
//     included), so whoever reads them back gets the typed message;
//   - outbox payloads are the serialized edge.v1.StatusReport without seq (the outbox assigns it);
//     EncodeReport() is what every report producer (dataset scanner, model verifier, worker REST,
//     triggers) uses to enqueue, so the key (latest state per object/report type/sub key) and the
//     encoding stay in one place.

#include <functional>
#include <string>

#include "localcontroller/cloudlink/desired_state_store.h"
#include "localcontroller/cloudlink/report_source.h"
#include "localcontroller/db/lc_database.h"

namespace nereid::lc {

// An outbox entry ready for Outbox::Enqueue: key, observed version and payload.
struct EncodedReport {
  db::OutboxKey key;
  std::string observed_version;
  std::string payload;
};

// InvalidArgument for a report without ref or payload.
absl::StatusOr<EncodedReport> EncodeReport(const edge::v1::StatusReport& report);
// Enqueues `report` in its own transaction; returns the seq.
absl::StatusOr<int64_t> EnqueueReport(db::LcDatabase& db, const edge::v1::StatusReport& report);
// Back from the outbox: the report with seq, ref (uid included) and observed version filled in.
absl::StatusOr<edge::v1::StatusReport> DecodeReport(const db::OutboxEntry& entry);

db::ObjectRef ToDbRef(const edge::v1::ObjectRef& ref);
edge::v1::ObjectRef FromDbRef(const db::ObjectRef& ref);
// Parses a desired object's spec back into the Resource the GM sent.
absl::StatusOr<edge::v1::Resource> DecodeDesiredObject(const db::DesiredObject& object);

class LcDbDesiredStateStore final : public DesiredStateStore {
 public:
  explicit LcDbDesiredStateStore(db::LcDatabase* db) : db_(db) {}
  absl::StatusOr<std::vector<edge::v1::InventoryItem>> Inventory() override;
  absl::Status Upsert(const edge::v1::Resource& resource) override;
  absl::Status Remove(const edge::v1::ObjectRef& ref) override;
  absl::Status RecordSync(absl::Time time) override;

 private:
  db::LcDatabase* db_;
};

class LcDbReportSource final : public ReportSource {
 public:
  explicit LcDbReportSource(db::LcDatabase* db) : db_(db) {}
  absl::StatusOr<std::vector<edge::v1::StatusReport>> Pending(int limit,
                                                              uint64_t after_seq) override;
  absl::Status Ack(uint64_t seq) override;
  absl::Status Reject(uint64_t seq, std::string_view reason) override;
  void SetWakeup(std::function<void()> wakeup) override;

 private:
  db::LcDatabase* db_;
};

}  // namespace nereid::lc
