#pragma once

// The desired_objects table: what the GM sent this node, keyed by (kind, namespace, name).
// A view over a connection: the caller (LcDatabase) holds the lock and, for writes, a transaction.

#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/store/sqlite_db.h"
#include "common/time/clock.h"
#include "localcontroller/db/types.h"

namespace nereid::lc::db {

class DesiredObjects {
 public:
  DesiredObjects(store::Db& db, Clock* clock) : db_(db), clock_(clock) {}

  // Inserts or updates in place (never delete+insert, which would cascade to dataset rows).
  // InvalidArgument when kind or name is empty.
  absl::Status Upsert(const ObjectRef& ref, std::string_view version, std::string_view spec);
  // Whether a row was deleted; deleting an absent object is not an error (deletes are idempotent).
  // Cascades to a Dataset's result and file checkpoints.
  absl::StatusOr<bool> Delete(const ObjectRef& ref);
  // NotFound when absent. ref.uid is ignored.
  absl::StatusOr<DesiredObject> Get(const ObjectRef& ref);
  // All objects of `kind`, ordered by namespace and name.
  absl::StatusOr<std::vector<DesiredObject>> List(std::string_view kind);
  // Every object's ref and version (no specs), ordered by kind, namespace, name.
  absl::StatusOr<std::vector<InventoryEntry>> Inventory();

 private:
  store::Db& db_;
  Clock* clock_;
};

}  // namespace nereid::lc::db
