#include "localcontroller/db/outbox.h"

#include "absl/strings/str_cat.h"
#include "common/log/log.h"
#include "common/status/macros.h"
#include "common/strings/absl_compat.h"

namespace nereid::lc::db {

absl::StatusOr<int64_t> Outbox::Enqueue(const OutboxKey& key, std::string_view observed_version,
                                        std::string_view payload) {
  if (key.object.kind.empty() || key.object.name.empty() || key.report_type.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "outbox key needs a kind, a name and a report type, got \"", key.DebugString(), "\""));
  }
  int64_t seq = 0;
  {
    ASSIGN_OR_RETURN(store::CachedStatement next,
                     db_.Cached("UPDATE outbox_counters SET last_seq = last_seq + 1, "
                                "enqueued = enqueued + 1 WHERE id = 1 RETURNING last_seq"));
    ASSIGN_OR_RETURN(bool row, next->Step());
    if (!row) return absl::DataLossError("outbox_counters row is missing");
    seq = next->ColumnInt(0);
  }
  {
    ASSIGN_OR_RETURN(store::CachedStatement drop,
                     db_.Cached("DELETE FROM outbox WHERE kind = ?1 AND namespace = ?2 AND "
                                "name = ?3 AND report_type = ?4 AND sub_key = ?5"));
    drop->BindText(1, key.object.kind)
        .BindText(2, key.object.ns)
        .BindText(3, key.object.name)
        .BindText(4, key.report_type)
        .BindText(5, key.sub_key);
    ASSIGN_OR_RETURN(int64_t replaced, drop->Exec());
    if (replaced > 0) {
      ASSIGN_OR_RETURN(store::CachedStatement count,
                       db_.Cached("UPDATE outbox_counters SET replaced = replaced + ?1 "
                                  "WHERE id = 1"));
      count->BindInt(1, replaced);
      RETURN_IF_ERROR(count->Exec().status());
    }
  }
  ASSIGN_OR_RETURN(store::CachedStatement insert,
                   db_.Cached("INSERT INTO outbox(seq, kind, namespace, name, report_type, "
                              "sub_key, uid, observed_version, payload, enqueued_at) "
                              "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"));
  insert->BindInt(1, seq)
      .BindText(2, key.object.kind)
      .BindText(3, key.object.ns)
      .BindText(4, key.object.name)
      .BindText(5, key.report_type)
      .BindText(6, key.sub_key)
      .BindText(7, key.object.uid)
      .BindText(8, observed_version)
      .BindBlob(9, payload)
      .BindInt(10, absl::ToUnixMicros(clock_->Now()));
  RETURN_IF_ERROR(insert->Exec().status());
  ++enqueue_calls_;
  return seq;
}

absl::StatusOr<std::vector<OutboxEntry>> Outbox::Pending(int limit, int64_t after_seq) {
  ASSIGN_OR_RETURN(store::CachedStatement stmt,
                   db_.Cached("SELECT seq, kind, namespace, name, report_type, sub_key, uid, "
                              "observed_version, payload, enqueued_at FROM outbox "
                              "WHERE seq > ?1 ORDER BY seq LIMIT ?2"));
  stmt->BindInt(1, after_seq).BindInt(2, limit);
  std::vector<OutboxEntry> entries;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (!row) break;
    OutboxEntry e;
    e.seq = stmt->ColumnInt(0);
    e.key.object.kind = stmt->ColumnText(1);
    e.key.object.ns = stmt->ColumnText(2);
    e.key.object.name = stmt->ColumnText(3);
    e.key.report_type = stmt->ColumnText(4);
    e.key.sub_key = stmt->ColumnText(5);
    e.key.object.uid = stmt->ColumnText(6);
    e.observed_version = stmt->ColumnText(7);
    e.payload = stmt->ColumnBlob(8);
    e.enqueued_at = absl::FromUnixMicros(stmt->ColumnInt(9));
    entries.push_back(std::move(e));
  }
  return entries;
}

absl::StatusOr<bool> Outbox::Remove(int64_t seq, bool rejected) {
  ASSIGN_OR_RETURN(store::CachedStatement drop,
                   db_.Cached("DELETE FROM outbox WHERE seq = ?1"));
  drop->BindInt(1, seq);
  ASSIGN_OR_RETURN(int64_t removed, drop->Exec());
  if (removed == 0) return false;
  ASSIGN_OR_RETURN(store::CachedStatement count,
                   db_.Cached(rejected ? "UPDATE outbox_counters SET rejected = rejected + 1 "
                                         "WHERE id = 1"
                                       : "UPDATE outbox_counters SET acked = acked + 1 "
                                         "WHERE id = 1"));
  RETURN_IF_ERROR(count->Exec().status());
  return true;
}

absl::StatusOr<bool> Outbox::Ack(int64_t seq) { return Remove(seq, /*rejected=*/false); }

absl::StatusOr<bool> Outbox::Reject(int64_t seq, std::string_view reason) {
  // Read the key first, only to say in the log what the GM refused.
  std::string what = absl::StrCat("seq ", seq);
  {
    ASSIGN_OR_RETURN(store::CachedStatement stmt,
                     db_.Cached("SELECT kind, namespace, name, report_type, sub_key FROM outbox "
                                "WHERE seq = ?1"));
    stmt->BindInt(1, seq);
    ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (row) {
      absl::StrAppend(&what, " (", stmt->ColumnText(0), " ", stmt->ColumnText(1), "/",
                      stmt->ColumnText(2), " ", stmt->ColumnText(3),
                      stmt->ColumnText(4).empty() ? "" : "/", stmt->ColumnText(4), ")");
    }
  }
  ASSIGN_OR_RETURN(bool removed, Remove(seq, /*rejected=*/true));
  if (removed) {
    LOG(WARNING) << "outbox: GM rejected report " << what << ": " << reason << "; dropped";
  }
  return removed;
}

absl::StatusOr<int64_t> Outbox::Depth() {
  ASSIGN_OR_RETURN(store::CachedStatement stmt, db_.Cached("SELECT count(*) FROM outbox"));
  ASSIGN_OR_RETURN(bool row, stmt->Step());
  return row ? stmt->ColumnInt(0) : 0;
}

absl::StatusOr<OutboxStats> Outbox::Stats() {
  OutboxStats stats;
  ASSIGN_OR_RETURN(stats.depth, Depth());
  ASSIGN_OR_RETURN(store::CachedStatement stmt,
                   db_.Cached("SELECT last_seq, enqueued, replaced, acked, rejected "
                              "FROM outbox_counters WHERE id = 1"));
  ASSIGN_OR_RETURN(bool row, stmt->Step());
  if (!row) return absl::DataLossError("outbox_counters row is missing");
  stats.last_seq = stmt->ColumnInt(0);
  stats.enqueued = stmt->ColumnInt(1);
  stats.replaced = stmt->ColumnInt(2);
  stats.acked = stmt->ColumnInt(3);
  stats.rejected = stmt->ColumnInt(4);
  return stats;
}

}  // namespace nereid::lc::db
