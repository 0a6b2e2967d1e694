#include "localcontroller/db/desired_objects.h"

#include "absl/strings/str_cat.h"
#include "common/status/macros.h"
#include "common/strings/absl_compat.h"

namespace nereid::lc::db {
namespace {

constexpr char kSelectColumns[] =
    "SELECT kind, namespace, name, uid, version, spec, updated_at FROM desired_objects ";

DesiredObject ReadRow(const store::Statement& stmt) {
  DesiredObject obj;
  obj.ref.kind = stmt.ColumnText(0);
  obj.ref.ns = stmt.ColumnText(1);
  obj.ref.name = stmt.ColumnText(2);
  obj.ref.uid = stmt.ColumnText(3);
  obj.version = stmt.ColumnText(4);
  obj.spec = stmt.ColumnBlob(5);
  obj.updated_at = absl::FromUnixMicros(stmt.ColumnInt(6));
  return obj;
}

}  // namespace

absl::Status DesiredObjects::Upsert(const ObjectRef& ref, std::string_view version,
                                    std::string_view spec) {
  if (ref.kind.empty() || ref.name.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("desired object needs a kind and a name, got \"", ref.DebugString(), "\""));
  }
  ASSIGN_OR_RETURN(store::CachedStatement stmt,
                   db_.Cached("INSERT INTO desired_objects"
                              "(kind, namespace, name, uid, version, spec, updated_at) "
                              "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7) "
                              "ON CONFLICT(kind, namespace, name) DO UPDATE SET "
                              "uid = excluded.uid, version = excluded.version, "
                              "spec = excluded.spec, updated_at = excluded.updated_at"));
  stmt->BindText(1, ref.kind)
      .BindText(2, ref.ns)
      .BindText(3, ref.name)
      .BindText(4, ref.uid)
      .BindText(5, version)
      .BindBlob(6, spec)
      .BindInt(7, absl::ToUnixMicros(clock_->Now()));
  return stmt->Exec().status();
}

absl::StatusOr<bool> DesiredObjects::Delete(const ObjectRef& ref) {
  ASSIGN_OR_RETURN(
      store::CachedStatement stmt,
      db_.Cached("DELETE FROM desired_objects WHERE kind = ?1 AND namespace = ?2 AND name = ?3"));
  stmt->BindText(1, ref.kind).BindText(2, ref.ns).BindText(3, ref.name);
  ASSIGN_OR_RETURN(int64_t changed, stmt->Exec());
  return changed > 0;
}

absl::StatusOr<DesiredObject> DesiredObjects::Get(const ObjectRef& ref) {
  ASSIGN_OR_RETURN(store::CachedStatement stmt,
                   db_.Cached(absl::StrCat(kSelectColumns,
                                           "WHERE kind = ?1 AND namespace = ?2 AND name = ?3")));
  stmt->BindText(1, ref.kind).BindText(2, ref.ns).BindText(3, ref.name);
  ASSIGN_OR_RETURN(bool row, stmt->Step());
  if (!row) return absl::NotFoundError(absl::StrCat(ref.DebugString(), " is not a desired object"));
  return ReadRow(*stmt);
}

absl::StatusOr<std::vector<DesiredObject>> DesiredObjects::List(std::string_view kind) {
  ASSIGN_OR_RETURN(store::CachedStatement stmt,
                   db_.Cached(absl::StrCat(kSelectColumns,
                                           "WHERE kind = ?1 ORDER BY namespace, name")));
  stmt->BindText(1, kind);
  std::vector<DesiredObject> result;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (!row) break;
    result.push_back(ReadRow(*stmt));
  }
  return result;
}

absl::StatusOr<std::vector<InventoryEntry>> DesiredObjects::Inventory() {
  ASSIGN_OR_RETURN(store::CachedStatement stmt,
                   db_.Cached("SELECT kind, namespace, name, uid, version FROM desired_objects "
                              "ORDER BY kind, namespace, name"));
  std::vector<InventoryEntry> result;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (!row) break;
    InventoryEntry entry;
    entry.ref.kind = stmt->ColumnText(0);
    entry.ref.ns = stmt->ColumnText(1);
    entry.ref.name = stmt->ColumnText(2);
    entry.ref.uid = stmt->ColumnText(3);
    entry.version = stmt->ColumnText(4);
    result.push_back(std::move(entry));
  }
  return result;
}

}  // namespace nereid::lc::db
