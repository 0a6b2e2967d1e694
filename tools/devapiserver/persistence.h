#pragma once

// Where the Store keeps objects across restarts. The Store calls Put/Remove for every committed
// write (under its lock, before the change becomes visible) and LoadAll once at start. The
// highest resourceVersion ever issued is saved with each write, so after a restart the counter
// continues above it even when the newest object was deleted.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/kube/object.h"
#include "common/store/sqlite_db.h"

namespace nereid::devapi {

class Persistence {
 public:
  struct Record {
    std::string storage_key;  // "group/resource"
    std::string object_key;   // "ns/name" or "name"
    kube::Json object;
  };
  struct Snapshot {
    int64_t resource_version = 0;
    std::vector<Record> records;
  };

  virtual ~Persistence() = default;
  virtual absl::Status Put(std::string_view storage_key, std::string_view object_key,
                           const kube::Json& object, int64_t resource_version) = 0;
  virtual absl::Status Remove(std::string_view storage_key, std::string_view object_key,
                              int64_t resource_version) = 0;
  virtual absl::StatusOr<Snapshot> LoadAll() = 0;
};

// SQLite-backed persistence (common/store): one row per object, one transaction per write.
class SqlitePersistence final : public Persistence {
 public:
  static absl::StatusOr<std::unique_ptr<SqlitePersistence>> Open(const std::string& path);

  absl::Status Put(std::string_view storage_key, std::string_view object_key,
                   const kube::Json& object, int64_t resource_version) override;
  absl::Status Remove(std::string_view storage_key, std::string_view object_key,
                      int64_t resource_version) override;
  absl::StatusOr<Snapshot> LoadAll() override;

 private:
  explicit SqlitePersistence(std::unique_ptr<store::Db> db) : db_(std::move(db)) {}
  absl::Status SaveVersion(int64_t resource_version);

  // Only ever used under the Store's lock, so one connection without its own locking suffices.
  std::unique_ptr<store::Db> db_;
};

}  // namespace nereid::devapi
