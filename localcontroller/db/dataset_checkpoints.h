#pragma once

// Per-dataset scan state: the last result (count or error) and one opaque checkpoint per file path
// (the dataset counter defines the bytes). Rows exist only while the Dataset is a desired object and
// go away with it (ON DELETE CASCADE). A view over a connection: the caller (LcDatabase) holds the
// lock and, for writes, a transaction.

#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/store/sqlite_db.h"
#include "common/time/clock.h"
#include "localcontroller/db/types.h"

namespace nereid::lc::db {

class DatasetCheckpoints {
 public:
  DatasetCheckpoints(store::Db& db, Clock* clock) : db_(db), clock_(clock) {}

  // Writes fail with NotFound when the Dataset is not (or no longer) a desired object.
  absl::Status PutResult(std::string_view ns, std::string_view name, const DatasetResult& result);
  // NotFound when the dataset has no result yet.
  absl::StatusOr<DatasetResult> GetResult(std::string_view ns, std::string_view name);

  absl::Status PutFile(std::string_view ns, std::string_view name, std::string_view path,
                       std::string_view checkpoint);
  absl::StatusOr<bool> DeleteFile(std::string_view ns, std::string_view name,
                                  std::string_view path);
  // Drops every file checkpoint of the dataset (e.g. its url changed), keeping its result.
  absl::Status ClearFiles(std::string_view ns, std::string_view name);
  // Ordered by path.
  absl::StatusOr<std::vector<FileCheckpoint>> Files(std::string_view ns, std::string_view name);

 private:
  // Turns a foreign-key failure into "the dataset is not a desired object".
  absl::Status DatasetGone(const absl::Status& status, std::string_view ns, std::string_view name);

  store::Db& db_;
  Clock* clock_;
};

}  // namespace nereid::lc::db
