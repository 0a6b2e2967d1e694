#include "localcontroller/db/dataset_checkpoints.h"

#include <sqlite3.h>

#include "absl/strings/str_cat.h"
#include "common/status/macros.h"
#include "common/strings/absl_compat.h"

namespace nereid::lc::db {

absl::Status DatasetCheckpoints::DatasetGone(const absl::Status& status, std::string_view ns,
                                             std::string_view name) {
  if (store::SqliteCode(status) == SQLITE_CONSTRAINT_FOREIGNKEY) {
    return absl::NotFoundError(absl::StrCat("dataset ", ToAbsl(ns), "/", ToAbsl(name),
                                            " is not a desired object (deleted?)"));
  }
  return status;
}

absl::Status DatasetCheckpoints::PutResult(std::string_view ns, std::string_view name,
                                           const DatasetResult& result) {
  ASSIGN_OR_RETURN(store::CachedStatement stmt,
                   db_.Cached("INSERT INTO dataset_results"
                              "(namespace, name, count, error_reason, error_message, scanned_at) "
                              "VALUES(?1, ?2, ?3, ?4, ?5, ?6) "
                              "ON CONFLICT(kind, namespace, name) DO UPDATE SET "
                              "count = excluded.count, error_reason = excluded.error_reason, "
                              "error_message = excluded.error_message, "
                              "scanned_at = excluded.scanned_at"));
  stmt->BindText(1, ns).BindText(2, name);
  if (result.count.has_value()) {
    stmt->BindInt(3, *result.count);
  } else {
    stmt->BindNull(3);
  }
  stmt->BindText(4, result.error_reason)
      .BindText(5, result.error_message)
      .BindInt(6, absl::ToUnixMicros(result.scanned_at));
  return DatasetGone(stmt->Exec().status(), ns, name);
}

absl::StatusOr<DatasetResult> DatasetCheckpoints::GetResult(std::string_view ns,
                                                            std::string_view name) {
  ASSIGN_OR_RETURN(store::CachedStatement stmt,
                   db_.Cached("SELECT count, error_reason, error_message, scanned_at "
                              "FROM dataset_results "
                              "WHERE kind = 'Dataset' AND namespace = ?1 AND name = ?2"));
  stmt->BindText(1, ns).BindText(2, name);
  ASSIGN_OR_RETURN(bool row, stmt->Step());
  if (!row) {
    return absl::NotFoundError(
        absl::StrCat("dataset ", ToAbsl(ns), "/", ToAbsl(name), " has no scan result yet"));
  }
  DatasetResult result;
  if (!stmt->IsNull(0)) result.count = stmt->ColumnInt(0);
  result.error_reason = stmt->ColumnText(1);
  result.error_message = stmt->ColumnText(2);
  result.scanned_at = absl::FromUnixMicros(stmt->ColumnInt(3));
  return result;
}

absl::Status DatasetCheckpoints::PutFile(std::string_view ns, std::string_view name,
                                         std::string_view path, std::string_view checkpoint) {
  ASSIGN_OR_RETURN(store::CachedStatement stmt,
                   db_.Cached("INSERT INTO dataset_files"
                              "(namespace, name, path, checkpoint, updated_at) "
                              "VALUES(?1, ?2, ?3, ?4, ?5) "
                              "ON CONFLICT(kind, namespace, name, path) DO UPDATE SET "
                              "checkpoint = excluded.checkpoint, updated_at = excluded.updated_at"));
  stmt->BindText(1, ns)
      .BindText(2, name)
      .BindText(3, path)
      .BindBlob(4, checkpoint)
      .BindInt(5, absl::ToUnixMicros(clock_->Now()));
  return DatasetGone(stmt->Exec().status(), ns, name);
}

absl::StatusOr<bool> DatasetCheckpoints::DeleteFile(std::string_view ns, std::string_view name,
                                                    std::string_view path) {
  ASSIGN_OR_RETURN(store::CachedStatement stmt,
                   db_.Cached("DELETE FROM dataset_files WHERE kind = 'Dataset' AND "
                              "namespace = ?1 AND name = ?2 AND path = ?3"));
  stmt->BindText(1, ns).BindText(2, name).BindText(3, path);
  ASSIGN_OR_RETURN(int64_t changed, stmt->Exec());
  return changed > 0;
}

absl::Status DatasetCheckpoints::ClearFiles(std::string_view ns, std::string_view name) {
  ASSIGN_OR_RETURN(store::CachedStatement stmt,
                   db_.Cached("DELETE FROM dataset_files WHERE kind = 'Dataset' AND "
                              "namespace = ?1 AND name = ?2"));
  stmt->BindText(1, ns).BindText(2, name);
  return stmt->Exec().status();
}

absl::StatusOr<std::vector<FileCheckpoint>> DatasetCheckpoints::Files(std::string_view ns,
                                                                      std::string_view name) {
  ASSIGN_OR_RETURN(store::CachedStatement stmt,
                   db_.Cached("SELECT path, checkpoint, updated_at FROM dataset_files "
                              "WHERE kind = 'Dataset' AND namespace = ?1 AND name = ?2 "
                              "ORDER BY path"));
  stmt->BindText(1, ns).BindText(2, name);
  std::vector<FileCheckpoint> files;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (!row) break;
    files.push_back({stmt->ColumnText(0), stmt->ColumnBlob(1),
                     absl::FromUnixMicros(stmt->ColumnInt(2))});
  }
  return files;
}

}  // namespace nereid::lc::db
