#pragma once

// The LocalController's SQLite database: desired objects (what the GM sent this node), dataset scan
// results and per-file checkpoints, the upstream outbox, and a small meta table. The LC keeps
// working while the cloud is away and loses nothing across SIGKILL:
//   - every write returns only after its transaction committed (apply -> commit -> ACK);
//   - several writes that must stand or fall together (a new checkpoint + the report it produced;
//     a batch of upserts) go through Write() as one transaction;
//   - WAL + synchronous=NORMAL: consistent after any crash, durable across process crashes; a power
//     loss may roll back the last commits, which the Hello/resync protocol repairs.
//
// Thread-safety: thread-safe. One connection, serialized by an absl::Mutex held for each call and
// for the whole of a Write()/Read() callback (the cloud-link, scanner and HTTP threads share it).
// A callback must use the Tables it is given and never call back into the LcDatabase (deadlock).

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/store/sqlite_db.h"
#include "common/time/clock.h"
#include "localcontroller/db/dataset_checkpoints.h"
#include "localcontroller/db/desired_objects.h"
#include "localcontroller/db/meta.h"
#include "localcontroller/db/outbox.h"
#include "localcontroller/db/types.h"

namespace nereid::lc::db {

class LcDatabase {
 public:
  enum class OnCorruption {
    kFail,       // return DataLoss and leave the file alone
    kMoveAside,  // rename the file (and its -wal/-shm) to <path>.corrupt-<unix seconds> and start
                 // empty: the GM resends the desired state and scanners re-report
  };

  struct Options {
    std::string path;       // the database file; parent directories are created
    std::string node_name;  // required; a database created for another node is refused
    Clock* clock = Clock::Real();
    store::DbOptions db;                 // WAL, synchronous=NORMAL, busy_timeout 5 s, 1 MiB cache
    bool quick_check_on_open = true;     // PRAGMA quick_check before use
    OnCorruption on_corruption = OnCorruption::kFail;
  };

  // The tables of one transaction, handed to Write()/Read() callbacks.
  struct Tables {
    DesiredObjects desired;
    DatasetCheckpoints datasets;
    Outbox outbox;
    Meta meta;
  };

  // Opens (creating if needed), checks, migrates and claims the database for options.node_name.
  // Errors: InvalidArgument (no path/node), FailedPrecondition (another node's database, or a
  // schema newer than this binary), DataLoss (corrupt, with OnCorruption::kFail), or SQLite's.
  static absl::StatusOr<std::unique_ptr<LcDatabase>> Open(Options options);

  LcDatabase(const LcDatabase&) = delete;
  LcDatabase& operator=(const LcDatabase&) = delete;
  ~LcDatabase();

  // Runs `fn` in one IMMEDIATE transaction and commits it; an error from `fn` rolls everything back
  // and is returned. Wakes the outbox listener after commit if `fn` enqueued anything.
  absl::Status Write(absl::FunctionRef<absl::Status(Tables&)> fn);
  // Runs `fn` in one read transaction: a consistent snapshot across several queries.
  absl::Status Read(absl::FunctionRef<absl::Status(Tables&)> fn);

  // --- Desired objects (each call is its own committed transaction).
  absl::Status Upsert(const ObjectRef& ref, std::string_view version, std::string_view spec);
  absl::StatusOr<bool> Delete(const ObjectRef& ref);  // false when it was not there
  absl::StatusOr<DesiredObject> Get(const ObjectRef& ref);  // NotFound when absent
  absl::StatusOr<std::vector<DesiredObject>> List(std::string_view kind);
  absl::StatusOr<std::vector<InventoryEntry>> Inventory();

  // --- Datasets. Writes fail with NotFound when the Dataset is not a desired object.
  absl::Status PutDatasetResult(std::string_view ns, std::string_view name,
                                const DatasetResult& result);
  absl::StatusOr<DatasetResult> GetDatasetResult(std::string_view ns, std::string_view name);
  absl::Status PutFileCheckpoint(std::string_view ns, std::string_view name, std::string_view path,
                                 std::string_view checkpoint);
  absl::StatusOr<std::vector<FileCheckpoint>> FileCheckpoints(std::string_view ns,
                                                              std::string_view name);

  // --- Outbox (see outbox.h for the semantics).
  absl::StatusOr<int64_t> Enqueue(const OutboxKey& key, std::string_view observed_version,
                                  std::string_view payload);
  absl::StatusOr<std::vector<OutboxEntry>> Pending(int limit, int64_t after_seq = 0);
  absl::StatusOr<bool> Ack(int64_t seq);
  absl::StatusOr<bool> Reject(int64_t seq, std::string_view reason);
  absl::StatusOr<int64_t> OutboxDepth();
  absl::StatusOr<OutboxStats> GetOutboxStats();
  // Called (on the enqueuing thread, after commit, without the lock held) whenever a write
  // enqueued a report: the sender's wake-up. Replaces any previous listener; nullptr clears it.
  void SetOutboxListener(std::function<void()> listener);

  // --- Meta.
  absl::Status SetMeta(std::string_view key, std::string_view value);
  absl::StatusOr<std::optional<std::string>> GetMeta(std::string_view key);
  absl::Status SetLastSync(absl::Time time);
  absl::StatusOr<std::optional<absl::Time>> LastSync();

  // Whether writes reach the disk. A write that fails for the storage (a full disk or file-size
  // limit, an I/O error, a read-only file) sets `error` until a later write commits; failures of
  // a write's own logic (NotFound, FailedPrecondition, ...) do not count.
  struct WriteHealth {
    absl::Status error;  // OK while writes commit
    absl::Time failing_since = absl::InfinitePast();
    int64_t failures = 0;  // storage failures since Open
  };
  WriteHealth write_health() const;

  // Full PRAGMA integrity_check (slow on big files; for tests and operator tooling).
  absl::Status CheckIntegrity();

  const std::string& path() const { return path_; }
  const std::string& node_name() const { return node_name_; }

 private:
  LcDatabase(std::string path, std::string node_name, std::unique_ptr<store::Db> db, Clock* clock);
  void NotifyEnqueued();
  absl::Status WriteLocked(absl::FunctionRef<absl::Status(Tables&)> fn, bool* enqueued)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RecordWriteOutcome(const absl::Status& status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string path_;
  const std::string node_name_;
  absl::Mutex mu_;
  std::unique_ptr<store::Db> db_ ABSL_GUARDED_BY(mu_);
  Tables tables_ ABSL_GUARDED_BY(mu_);
  Clock* const clock_;
  mutable absl::Mutex health_mu_;  // apart from mu_: readers must not wait behind a slow write
  WriteHealth health_ ABSL_GUARDED_BY(health_mu_);

  absl::Mutex listener_mu_;
  std::function<void()> listener_ ABSL_GUARDED_BY(listener_mu_);
};

}  // namespace nereid::lc::db
