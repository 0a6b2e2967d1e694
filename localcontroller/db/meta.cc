#include "localcontroller/db/meta.h"

#include "common/status/macros.h"

namespace nereid::lc::db {

absl::Status Meta::Set(std::string_view key, std::string_view value) {
  ASSIGN_OR_RETURN(store::CachedStatement stmt,
                   db_.Cached("INSERT INTO meta(key, value) VALUES(?1, ?2) "
                              "ON CONFLICT(key) DO UPDATE SET value = excluded.value"));
  stmt->BindText(1, key).BindText(2, value);
  return stmt->Exec().status();
}

absl::StatusOr<std::optional<std::string>> Meta::Get(std::string_view key) {
  ASSIGN_OR_RETURN(store::CachedStatement stmt, db_.Cached("SELECT value FROM meta WHERE key = ?1"));
  stmt->BindText(1, key);
  ASSIGN_OR_RETURN(bool row, stmt->Step());
  if (!row) return std::optional<std::string>();
  return std::optional<std::string>(stmt->ColumnText(0));
}

absl::Status Meta::Erase(std::string_view key) {
  ASSIGN_OR_RETURN(store::CachedStatement stmt, db_.Cached("DELETE FROM meta WHERE key = ?1"));
  stmt->BindText(1, key);
  return stmt->Exec().status();
}

}  // namespace nereid::lc::db
