#pragma once

// The meta table: small string key/values about the database itself (the node it belongs to, the
// last successful sync, ...). A view over a connection: the caller (LcDatabase) holds the lock.

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/store/sqlite_db.h"

namespace nereid::lc::db {

inline constexpr char kMetaNodeName[] = "node_name";
inline constexpr char kMetaLastSync[] = "last_sync";  // RFC 3339 time of the last completed sync

class Meta {
 public:
  explicit Meta(store::Db& db) : db_(db) {}

  absl::Status Set(std::string_view key, std::string_view value);
  // nullopt when the key is absent.
  absl::StatusOr<std::optional<std::string>> Get(std::string_view key);
  absl::Status Erase(std::string_view key);

 private:
  store::Db& db_;
};

}  // namespace nereid::lc::db
