#include "localcontroller/db/schema.h"

namespace nereid::lc::db {
namespace {

// Times are unix microseconds. Dataset rows reference their desired object (kind is pinned to
// 'Dataset'), so deleting the Dataset deletes its result and checkpoints in the same transaction,
// and a late scan result for a deleted dataset cannot resurrect orphan rows. Child primary keys start
// with the foreign key columns so cascades use an index. Desired objects are updated with
// INSERT ... ON CONFLICT DO UPDATE, never REPLACE (which would delete and cascade).
constexpr char kSchemaV1[] = R"sql(
CREATE TABLE meta(
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

CREATE TABLE desired_objects(
  id INTEGER PRIMARY KEY,
  kind TEXT NOT NULL,
  namespace TEXT NOT NULL,
  name TEXT NOT NULL,
  uid TEXT NOT NULL,
  version TEXT NOT NULL,
  spec BLOB NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE(kind, namespace, name)
);

CREATE TABLE dataset_results(
  kind TEXT NOT NULL DEFAULT 'Dataset' CHECK(kind = 'Dataset'),
  namespace TEXT NOT NULL,
  name TEXT NOT NULL,
  count INTEGER,
  error_reason TEXT NOT NULL,
  error_message TEXT NOT NULL,
  scanned_at INTEGER NOT NULL,
  PRIMARY KEY(kind, namespace, name),
  FOREIGN KEY(kind, namespace, name) REFERENCES desired_objects(kind, namespace, name)
    ON DELETE CASCADE
);

CREATE TABLE dataset_files(
  kind TEXT NOT NULL DEFAULT 'Dataset' CHECK(kind = 'Dataset'),
  namespace TEXT NOT NULL,
  name TEXT NOT NULL,
  path TEXT NOT NULL,
  checkpoint BLOB NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY(kind, namespace, name, path),
  FOREIGN KEY(kind, namespace, name) REFERENCES desired_objects(kind, namespace, name)
    ON DELETE CASCADE
);

-- seq is assigned from outbox_counters.last_seq, so it is never reused even after the row with the
-- highest seq is deleted; the UNIQUE key makes the latest state replace an older unsent one.
CREATE TABLE outbox(
  seq INTEGER PRIMARY KEY,
  kind TEXT NOT NULL,
  namespace TEXT NOT NULL,
  name TEXT NOT NULL,
  report_type TEXT NOT NULL,
  sub_key TEXT NOT NULL,
  uid TEXT NOT NULL,
  observed_version TEXT NOT NULL,
  payload BLOB NOT NULL,
  enqueued_at INTEGER NOT NULL,
  UNIQUE(kind, namespace, name, report_type, sub_key)
);

CREATE TABLE outbox_counters(
  id INTEGER PRIMARY KEY CHECK(id = 1),
  last_seq INTEGER NOT NULL,
  enqueued INTEGER NOT NULL,
  replaced INTEGER NOT NULL,
  acked INTEGER NOT NULL,
  rejected INTEGER NOT NULL
);
INSERT INTO outbox_counters VALUES(1, 0, 0, 0, 0, 0);
)sql";

const store::Migration kMigrations[] = {
    {1, kSchemaV1},
};

}  // namespace

std::span<const store::Migration> Migrations() { return kMigrations; }

}  // namespace nereid::lc::db
