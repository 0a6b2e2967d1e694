#include "tools/devapiserver/persistence.h"

#include "absl/strings/str_cat.h"
#include "common/kube/object.h"
#include "common/log/log.h"
#include "common/status/macros.h"
#include "common/strings/absl_compat.h"

namespace nereid::devapi {
namespace {

const store::Migration kMigrations[] = {
    {1,
     "CREATE TABLE objects (storage_key TEXT NOT NULL, object_key TEXT NOT NULL,"
     " body TEXT NOT NULL, PRIMARY KEY (storage_key, object_key));"
     "CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);"
     "INSERT INTO meta(key, value) VALUES ('resource_version', 0);"},
};

}  // namespace

absl::StatusOr<std::unique_ptr<SqlitePersistence>> SqlitePersistence::Open(const std::string& path) {
  ASSIGN_OR_RETURN(std::unique_ptr<store::Db> db, store::Db::Open(path));
  RETURN_IF_ERROR(db->Migrate(kMigrations));
  return std::unique_ptr<SqlitePersistence>(new SqlitePersistence(std::move(db)));
}

absl::Status SqlitePersistence::SaveVersion(int64_t resource_version) {
  ASSIGN_OR_RETURN(store::CachedStatement st,
                   db_->Cached("UPDATE meta SET value = MAX(value, ?) WHERE key = 'resource_version'"));
  st->BindInt(1, resource_version);
  return st->Exec().status();
}

absl::Status SqlitePersistence::Put(std::string_view storage_key, std::string_view object_key,
                                    const kube::Json& object, int64_t resource_version) {
  ASSIGN_OR_RETURN(store::Transaction txn, store::Transaction::Begin(*db_));
  {
    ASSIGN_OR_RETURN(store::CachedStatement st,
                     db_->Cached("INSERT INTO objects(storage_key, object_key, body) VALUES(?, ?, ?)"
                                 " ON CONFLICT(storage_key, object_key) DO UPDATE SET body = excluded.body"));
    st->BindText(1, storage_key).BindText(2, object_key).BindText(3, kube::DumpCompact(object));
    RETURN_IF_ERROR(st->Exec().status());
  }
  RETURN_IF_ERROR(SaveVersion(resource_version));
  return txn.Commit();
}

absl::Status SqlitePersistence::Remove(std::string_view storage_key, std::string_view object_key,
                                       int64_t resource_version) {
  ASSIGN_OR_RETURN(store::Transaction txn, store::Transaction::Begin(*db_));
  {
    ASSIGN_OR_RETURN(store::CachedStatement st,
                     db_->Cached("DELETE FROM objects WHERE storage_key = ? AND object_key = ?"));
    st->BindText(1, storage_key).BindText(2, object_key);
    RETURN_IF_ERROR(st->Exec().status());
  }
  RETURN_IF_ERROR(SaveVersion(resource_version));
  return txn.Commit();
}

absl::StatusOr<Persistence::Snapshot> SqlitePersistence::LoadAll() {
  Snapshot snapshot;
  ASSIGN_OR_RETURN(snapshot.resource_version,
                   db_->QueryInt("SELECT value FROM meta WHERE key = 'resource_version'"));
  ASSIGN_OR_RETURN(store::Statement st,
                   db_->Prepare("SELECT storage_key, object_key, body FROM objects"
                                " ORDER BY storage_key, object_key"));
  while (true) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    Record r{st.ColumnText(0), st.ColumnText(1), kube::Json()};
    r.object = kube::Json::parse(st.ColumnView(2), nullptr, /*allow_exceptions=*/false);
    if (!r.object.is_object()) {
      // Keep going: one damaged row must not make the rest of the state unreachable.
      LOG(ERROR) << "devapiserver: skipping unreadable stored object " << r.storage_key << " "
                 << r.object_key;
      continue;
    }
    snapshot.records.push_back(std::move(r));
  }
  return snapshot;
}

}  // namespace nereid::devapi
