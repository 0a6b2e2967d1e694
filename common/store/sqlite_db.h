#pragma once

// RAII over the sqlite3 C API (the SQLiteCpp shape, with absl::Status instead of exceptions):
//   Db          owns the connection; opened with WAL, synchronous=NORMAL, busy_timeout and
//               foreign_keys; caches prepared statements; applies versioned schema migrations.
//   Statement   owns a prepared statement: bind by index or name, step, read columns, reset.
//   Transaction rolls back in its destructor unless committed; BEGIN IMMEDIATE by default, so a
//               writer takes the write lock up front instead of failing with SQLITE_BUSY on upgrade.
// Every SQLite result code becomes an absl::Status carrying SQLite's error text (see SqliteStatus).
//
// Thread-safety: a Db and everything obtained from it (statements, transactions) are
// thread-compatible, not thread-safe: use one Db per thread, or guard one Db with a mutex and hold it
// across a whole transaction. The connection is opened SQLITE_OPEN_NOMUTEX accordingly. Never carry
// an open Db across fork(): open it again in the child.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<store::Db> db, store::Db::Open("/var/lib/nereid/lc.db"));
//   RETURN_IF_ERROR(db->Migrate(kMigrations));
//   ASSIGN_OR_RETURN(store::Transaction txn, store::Transaction::Begin(*db));
//   ASSIGN_OR_RETURN(store::CachedStatement insert, db->Cached("INSERT INTO t(k, v) VALUES(?, ?)"));
//   insert->BindText(1, key).BindBlob(2, bytes);
//   RETURN_IF_ERROR(insert->Exec());
//   RETURN_IF_ERROR(txn.Commit());

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

struct sqlite3;
struct sqlite3_stmt;

namespace nereid::store {

// The absl::Status for SQLite result code `rc` (an extended code when available), with `context`
// (what we were doing), SQLite's description of the code and, when `db` is given, the connection's
// error message. The code travels as a payload (SqliteCode). Mapping:
//   SQLITE_OK/ROW/DONE                      OK
//   CONSTRAINT_UNIQUE/PRIMARYKEY            kAlreadyExists
//   other CONSTRAINT (FK, NOT NULL, CHECK)  kFailedPrecondition
//   BUSY, LOCKED, PROTOCOL                  kUnavailable        (retryable)
//   NOMEM, FULL, NOLFS                      kResourceExhausted
//   READONLY, PERM, AUTH                    kPermissionDenied
//   CANTOPEN, IOERR                         kUnavailable
//   CORRUPT, NOTADB                         kDataLoss
//   RANGE, TOOBIG, MISMATCH                 kInvalidArgument
//   INTERRUPT                               kCancelled
//   ABORT, SCHEMA                           kAborted
//   ERROR (SQL error), MISUSE, others       kInternal
absl::Status SqliteStatus(int rc, sqlite3* db, std::string_view context);
// The SQLite (extended) result code a status made by SqliteStatus carries.
std::optional<int> SqliteCode(const absl::Status& status);

// A prepared statement. Bind* calls chain and never fail on their own: the first bind error is kept
// and returned by the next Step()/Exec(), so call sites stay short without losing errors.
// Indexes are 1-based (SQLite's convention); names include their prefix as written (":key").
class Statement {
 public:
  Statement(Statement&&) noexcept;
  Statement& operator=(Statement&&) noexcept;
  ~Statement();

  Statement& BindInt(int index, int64_t value);
  Statement& BindDouble(int index, double value);
  Statement& BindText(int index, std::string_view value);
  Statement& BindBlob(int index, std::string_view bytes);
  Statement& BindNull(int index);
  Statement& BindInt(std::string_view name, int64_t value);
  Statement& BindDouble(std::string_view name, double value);
  Statement& BindText(std::string_view name, std::string_view value);
  Statement& BindBlob(std::string_view name, std::string_view bytes);
  Statement& BindNull(std::string_view name);

  // Advances: true when a row is available, false when the statement is done. An error resets the
  // statement so it can be rebound and retried.
  absl::StatusOr<bool> Step();
  // Runs a statement that returns no rows we care about (INSERT/UPDATE/DELETE/DDL) to completion,
  // then resets it (bindings stay). Returns the number of rows changed.
  absl::StatusOr<int64_t> Exec();

  // Column accessors for the current row (0-based). Out-of-range or NULL reads as 0 / "".
  int ColumnCount() const;
  std::string ColumnName(int col) const;
  bool IsNull(int col) const;
  int64_t ColumnInt(int col) const;
  double ColumnDouble(int col) const;
  std::string ColumnText(int col) const;
  std::string ColumnBlob(int col) const;
  // Valid until the next Step/Reset; avoids a copy when the caller only inspects the bytes.
  std::string_view ColumnView(int col) const;

  // Makes the statement ready to run again: releases its read snapshot and clears bindings.
  void Reset();
  std::string Sql() const;

 private:
  friend class Db;
  explicit Statement(sqlite3_stmt* stmt);
  int IndexOf(std::string_view name);
  Statement& Check(int rc, int index);

  struct Finalizer {
    void operator()(sqlite3_stmt* stmt) const;
  };
  std::unique_ptr<sqlite3_stmt, Finalizer> stmt_;
  absl::Status bind_error_;
};

// A statement borrowed from the Db's cache. It is reset (snapshot released, bindings cleared) when
// it goes out of scope, so the next user starts clean. Must not outlive the Db.
class CachedStatement {
 public:
  explicit CachedStatement(Statement* stmt) : stmt_(stmt) {}
  CachedStatement(CachedStatement&& other) noexcept : stmt_(other.stmt_) { other.stmt_ = nullptr; }
  CachedStatement& operator=(CachedStatement&&) = delete;
  ~CachedStatement() {
    if (stmt_ != nullptr) stmt_->Reset();
  }
  Statement* operator->() const { return stmt_; }
  Statement& operator*() const { return *stmt_; }

 private:
  Statement* stmt_;
};

struct DbOptions {
  bool create = true;      // create the file if missing
  bool read_only = false;  // open read-only (no journal mode change, no migrations)
  bool wal = true;         // journal_mode=WAL (refused by network filesystems → error)
  // OFF | NORMAL | FULL | EXTRA. NORMAL in WAL is always consistent and durable across process
  // crashes; only an OS crash or power loss may roll back the last commits.
  std::string synchronous = "NORMAL";
  absl::Duration busy_timeout = absl::Seconds(5);
  // Page cache per connection (PRAGMA cache_size = -KiB). Small: edge daemons count every MB.
  int cache_size_kib = 1024;
  // Truncate the WAL to at most this size after a checkpoint, so it does not stay at its high-water mark.
  int64_t journal_size_limit_bytes = 4 << 20;
  bool foreign_keys = true;
};

class Db;

// One schema step. Applying it runs `sql` (may hold several statements) and then `apply` (optional,
// for data migrations) in one transaction that also sets PRAGMA user_version = version.
struct Migration {
  int version;  // 1, 2, 3, ...: contiguous, in order
  std::string_view sql;
  std::function<absl::Status(Db&)> apply = nullptr;
};

class Db {
 public:
  // Opens (and by default creates) the database at `path` (":memory:" for a private in-memory DB)
  // and applies `options`. Fails with SQLite's message, e.g. for a missing directory or a file that
  // is not a database.
  static absl::StatusOr<std::unique_ptr<Db>> Open(std::string path, const DbOptions& options = {});

  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;
  ~Db();

  // Runs one or more ';'-separated statements without parameters, discarding any rows.
  absl::Status Exec(std::string_view sql);
  // A fresh prepared statement owned by the caller.
  absl::StatusOr<Statement> Prepare(std::string_view sql);
  // A prepared statement from this connection's cache, keyed by its SQL text: prepared once, reused.
  // Borrow one SQL text once at a time: borrowing it again while the first borrow is still stepping
  // resets the first.
  absl::StatusOr<CachedStatement> Cached(std::string_view sql);
  // The first column of the first row of `sql` as an integer / text (e.g. for PRAGMAs and COUNT(*)).
  // NotFound when there is no row.
  absl::StatusOr<int64_t> QueryInt(std::string_view sql);
  absl::StatusOr<std::string> QueryText(std::string_view sql);

  // PRAGMA user_version, the schema version migrations maintain.
  absl::StatusOr<int> UserVersion();
  // Brings the schema to the last step's version, applying each missing step in its own IMMEDIATE
  // transaction. A database at a newer version than the last step is refused (FailedPrecondition):
  // this binary does not know that schema. Steps must be numbered 1..N in order.
  absl::Status Migrate(std::span<const Migration> steps);
  // PRAGMA integrity_check (or quick_check): OK, or DataLoss with SQLite's report.
  absl::Status CheckIntegrity(bool quick = false);

  int64_t LastInsertRowId() const;
  int64_t Changes() const;  // rows changed by the most recent statement
  bool InTransaction() const;
  const std::string& path() const { return path_; }
  // The raw handle, for SQLite features this wrapper does not cover.
  sqlite3* handle() const { return db_.get(); }

 private:
  struct Closer {
    void operator()(sqlite3* db) const;
  };
  Db(std::string path, sqlite3* db);
  absl::Status Configure(const DbOptions& options);
  absl::Status ApplyStep(const Migration& step);

  std::string path_;
  // Declared before the cache so cached statements are finalized before the connection closes.
  std::unique_ptr<sqlite3, Closer> db_;
  absl::flat_hash_map<std::string, std::unique_ptr<Statement>> cache_;
};

// A transaction on a Db: begun by Begin(), rolled back by the destructor unless Commit()ed.
// Not nestable (SQLite refuses a BEGIN inside a transaction: that is an error, not a savepoint).
// Thread-safety: a Transaction must not be shared between threads.
class Transaction {
 public:
  enum class Mode {
    kDeferred,   // takes locks lazily: for read-only transactions
    kImmediate,  // takes the write lock at BEGIN: for writers (waits on busy_timeout)
    kExclusive,
  };

  static absl::StatusOr<Transaction> Begin(Db& db, Mode mode = Mode::kImmediate);

  Transaction(Transaction&& other) noexcept : db_(other.db_) { other.db_ = nullptr; }
  Transaction& operator=(Transaction&&) = delete;
  ~Transaction();

  // Commits. On failure the transaction is rolled back and the error returned.
  absl::Status Commit();
  absl::Status Rollback();
  bool active() const { return db_ != nullptr; }

 private:
  explicit Transaction(Db* db) : db_(db) {}
  Db* db_;  // null once committed or rolled back
};

}  // namespace nereid::store
