#include "common/store/sqlite_db.h"

#include <sqlite3.h>

#include <utility>

#include "absl/memory/memory.h"
#include "absl/strings/ascii.h"
#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/log/log.h"
#include "common/status/macros.h"
#include "common/strings/absl_compat.h"

namespace nereid::store {
namespace {

constexpr char kSqliteCodeUrl[] = "type.googleapis.com/nereid.store.SqliteCode";

absl::StatusCode CodeFor(int rc) {
  switch (rc) {
    case SQLITE_CONSTRAINT_UNIQUE:
    case SQLITE_CONSTRAINT_PRIMARYKEY:
      return absl::StatusCode::kAlreadyExists;
    default:
      break;
  }
  switch (rc & 0xff) {
    case SQLITE_OK:
    case SQLITE_ROW:
    case SQLITE_DONE:
      return absl::StatusCode::kOk;
    case SQLITE_CONSTRAINT:
      return absl::StatusCode::kFailedPrecondition;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_PROTOCOL:
    case SQLITE_CANTOPEN:
    case SQLITE_IOERR:
      return absl::StatusCode::kUnavailable;
    case SQLITE_NOMEM:
    case SQLITE_FULL:
    case SQLITE_NOLFS:
      return absl::StatusCode::kResourceExhausted;
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_AUTH:
      return absl::StatusCode::kPermissionDenied;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return absl::StatusCode::kDataLoss;
    case SQLITE_RANGE:
    case SQLITE_TOOBIG:
    case SQLITE_MISMATCH:
      return absl::StatusCode::kInvalidArgument;
    case SQLITE_INTERRUPT:
      return absl::StatusCode::kCancelled;
    case SQLITE_ABORT:
    case SQLITE_SCHEMA:
      return absl::StatusCode::kAborted;
    default:
      return absl::StatusCode::kInternal;
  }
}

// Reads the connection's message only when it describes `rc` (it may be stale otherwise).
std::string ErrorText(int rc, sqlite3* db) {
  if (db == nullptr) return "";
  int last = sqlite3_extended_errcode(db);
  if (last != rc && (last & 0xff) != (rc & 0xff)) return "";
  const char* msg = sqlite3_errmsg(db);
  return msg == nullptr ? "" : msg;
}

}  // namespace

absl::Status SqliteStatus(int rc, sqlite3* db, std::string_view context) {
  absl::StatusCode code = CodeFor(rc);
  if (code == absl::StatusCode::kOk) return absl::OkStatus();
  std::string detail = ErrorText(rc, db);
  std::string generic = sqlite3_errstr(rc);
  std::string message = absl::StrCat(ToAbsl(context), ": ", generic);
  if (!detail.empty() && detail != generic) absl::StrAppend(&message, ": ", detail);
  absl::StrAppend(&message, " (sqlite rc ", rc, ")");
  absl::Status status(code, message);
  status.SetPayload(kSqliteCodeUrl, absl::Cord(absl::StrCat(rc)));
  return status;
}

std::optional<int> SqliteCode(const absl::Status& status) {
  auto payload = status.GetPayload(kSqliteCodeUrl);
  if (!payload.has_value()) return std::nullopt;
  int rc = 0;
  if (!absl::SimpleAtoi(std::string(*payload), &rc)) return std::nullopt;
  return rc;
}

// ---------------------------------------------------------------------------------------------
// Statement

void Statement::Finalizer::operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }

Statement::Statement(sqlite3_stmt* stmt) : stmt_(stmt) {}
Statement::Statement(Statement&&) noexcept = default;
Statement& Statement::operator=(Statement&&) noexcept = default;
Statement::~Statement() = default;

Statement& Statement::Check(int rc, int index) {
  if (rc != SQLITE_OK && bind_error_.ok()) {
    bind_error_ = SqliteStatus(rc, sqlite3_db_handle(stmt_.get()),
                               absl::StrCat("bind parameter ", index, " of \"", Sql(), "\""));
  }
  return *this;
}

int Statement::IndexOf(std::string_view name) {
  int index = sqlite3_bind_parameter_index(stmt_.get(), std::string(name).c_str());
  if (index == 0 && bind_error_.ok()) {
    bind_error_ = absl::InvalidArgumentError(
        absl::StrCat("no parameter named ", ToAbsl(name), " in \"", Sql(), "\""));
  }
  return index;
}

Statement& Statement::BindInt(int index, int64_t value) {
  return Check(sqlite3_bind_int64(stmt_.get(), index, value), index);
}
Statement& Statement::BindDouble(int index, double value) {
  return Check(sqlite3_bind_double(stmt_.get(), index, value), index);
}
// A null pointer binds SQL NULL, but an empty std::string_view{} means "", not NULL.
Statement& Statement::BindText(int index, std::string_view value) {
  const char* data = value.data() != nullptr ? value.data() : "";
  return Check(
      sqlite3_bind_text64(stmt_.get(), index, data, value.size(), SQLITE_TRANSIENT, SQLITE_UTF8),
      index);
}
Statement& Statement::BindBlob(int index, std::string_view bytes) {
  const char* data = bytes.data() != nullptr ? bytes.data() : "";
  return Check(sqlite3_bind_blob64(stmt_.get(), index, data, bytes.size(), SQLITE_TRANSIENT), index);
}
Statement& Statement::BindNull(int index) {
  return Check(sqlite3_bind_null(stmt_.get(), index), index);
}

Statement& Statement::BindInt(std::string_view name, int64_t value) {
  int index = IndexOf(name);
  return index == 0 ? *this : BindInt(index, value);
}
Statement& Statement::BindDouble(std::string_view name, double value) {
  int index = IndexOf(name);
  return index == 0 ? *this : BindDouble(index, value);
}
Statement& Statement::BindText(std::string_view name, std::string_view value) {
  int index = IndexOf(name);
  return index == 0 ? *this : BindText(index, value);
}
Statement& Statement::BindBlob(std::string_view name, std::string_view bytes) {
  int index = IndexOf(name);
  return index == 0 ? *this : BindBlob(index, bytes);
}
Statement& Statement::BindNull(std::string_view name) {
  int index = IndexOf(name);
  return index == 0 ? *this : BindNull(index);
}

absl::StatusOr<bool> Statement::Step() {
  if (!bind_error_.ok()) return bind_error_;
  int rc = sqlite3_step(stmt_.get());
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  absl::Status status =
      SqliteStatus(rc, sqlite3_db_handle(stmt_.get()), absl::StrCat("step \"", Sql(), "\""));
  sqlite3_reset(stmt_.get());
  return status;
}

absl::StatusOr<int64_t> Statement::Exec() {
  for (;;) {
    ASSIGN_OR_RETURN(bool row, Step());
    if (!row) break;
  }
  sqlite3_reset(stmt_.get());
  return sqlite3_changes64(sqlite3_db_handle(stmt_.get()));
}

int Statement::ColumnCount() const { return sqlite3_column_count(stmt_.get()); }

std::string Statement::ColumnName(int col) const {
  const char* name = sqlite3_column_name(stmt_.get(), col);
  return name == nullptr ? "" : name;
}

bool Statement::IsNull(int col) const {
  return sqlite3_column_type(stmt_.get(), col) == SQLITE_NULL;
}

int64_t Statement::ColumnInt(int col) const { return sqlite3_column_int64(stmt_.get(), col); }

double Statement::ColumnDouble(int col) const { return sqlite3_column_double(stmt_.get(), col); }

std::string_view Statement::ColumnView(int col) const {
  // Blob first, then bytes: the documented order that avoids a type conversion of the value.
  const void* data = sqlite3_column_blob(stmt_.get(), col);
  int size = sqlite3_column_bytes(stmt_.get(), col);
  if (data == nullptr || size <= 0) return {};
  return std::string_view(static_cast<const char*>(data), static_cast<size_t>(size));
}

std::string Statement::ColumnText(int col) const { return std::string(ColumnView(col)); }

std::string Statement::ColumnBlob(int col) const { return std::string(ColumnView(col)); }

void Statement::Reset() {
  sqlite3_reset(stmt_.get());
  sqlite3_clear_bindings(stmt_.get());
  bind_error_ = absl::OkStatus();
}

std::string Statement::Sql() const {
  const char* sql = sqlite3_sql(stmt_.get());
  return sql == nullptr ? "" : sql;
}

// ---------------------------------------------------------------------------------------------
// Db

void Db::Closer::operator()(sqlite3* db) const {
  int rc = sqlite3_close_v2(db);
  if (rc != SQLITE_OK) LOG(ERROR) << "sqlite close: " << sqlite3_errstr(rc);
}

Db::Db(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}

Db::~Db() {
  // Finalize cached statements before the connection closes (member order guarantees it too).
  cache_.clear();
}

absl::StatusOr<std::unique_ptr<Db>> Db::Open(std::string path, const DbOptions& options) {
  int flags = SQLITE_OPEN_NOMUTEX;
  if (options.read_only) {
    flags |= SQLITE_OPEN_READONLY;
  } else {
    flags |= SQLITE_OPEN_READWRITE;
    if (options.create) flags |= SQLITE_OPEN_CREATE;
  }
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  // sqlite3_open_v2 hands out a handle even on failure; own it right away so it is closed.
  std::unique_ptr<Db> db = absl::WrapUnique(new Db(path, raw));
  if (rc != SQLITE_OK) {
    return SqliteStatus(rc, raw, absl::StrCat("open sqlite database ", path));
  }
  sqlite3_extended_result_codes(raw, 1);
  RETURN_IF_ERROR(db->Configure(options));
  return db;
}

absl::Status Db::Configure(const DbOptions& options) {
  std::string sync = absl::AsciiStrToUpper(options.synchronous);
  if (sync != "OFF" && sync != "NORMAL" && sync != "FULL" && sync != "EXTRA") {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid synchronous mode \"", options.synchronous, "\" for ", path_));
  }
  int rc = sqlite3_busy_timeout(db_.get(),
                                static_cast<int>(absl::ToInt64Milliseconds(options.busy_timeout)));
  RETURN_IF_ERROR(SqliteStatus(rc, db_.get(), "set busy_timeout"));
  // Reading the header here turns "file is not a database" into an error at open, not first use.
  RETURN_IF_ERROR(QueryInt("PRAGMA schema_version").status());
  RETURN_IF_ERROR(Exec(absl::StrCat("PRAGMA cache_size=-", options.cache_size_kib,
                                    "; PRAGMA mmap_size=0; PRAGMA foreign_keys=",
                                    options.foreign_keys ? "ON" : "OFF")));
  if (options.read_only) return absl::OkStatus();
  if (options.wal) {
    ASSIGN_OR_RETURN(std::string mode, QueryText("PRAGMA journal_mode=WAL"));
    mode = absl::AsciiStrToLower(mode);
    // In-memory databases stay "memory"; anything else means WAL is unavailable here.
    if (mode != "wal" && mode != "memory") {
      return absl::FailedPreconditionError(absl::StrCat(
          "cannot enable WAL journal for ", path_, " (journal_mode is ", mode,
          "); is it on a network filesystem?"));
    }
  }
  return Exec(absl::StrCat("PRAGMA synchronous=", sync, "; PRAGMA journal_size_limit=",
                           options.journal_size_limit_bytes));
}

absl::Status Db::Exec(std::string_view sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(db_.get(), std::string(sql).c_str(), nullptr, nullptr, &err);
  if (rc == SQLITE_OK) return absl::OkStatus();
  std::string detail = err != nullptr ? err : "";
  sqlite3_free(err);
  absl::Status status = SqliteStatus(rc, db_.get(), absl::StrCat("exec \"", ToAbsl(sql), "\""));
  if (!detail.empty() && status.message().find(detail) == absl::string_view::npos) {
    absl::Status with_detail(status.code(), absl::StrCat(status.message(), ": ", detail));
    with_detail.SetPayload(kSqliteCodeUrl, absl::Cord(absl::StrCat(rc)));
    return with_detail;
  }
  return status;
}

absl::StatusOr<Statement> Db::Prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  const char* tail = nullptr;
  int rc = sqlite3_prepare_v3(db_.get(), sql.data(), static_cast<int>(sql.size()),
                              SQLITE_PREPARE_PERSISTENT, &stmt, &tail);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return SqliteStatus(rc, db_.get(), absl::StrCat("prepare \"", ToAbsl(sql), "\""));
  }
  Statement result(stmt);
  if (stmt == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("prepare \"", ToAbsl(sql), "\": no statement"));
  }
  // Only the first statement would run; refuse trailing SQL instead of silently ignoring it.
  std::string_view rest(tail, static_cast<size_t>(sql.data() + sql.size() - tail));
  if (rest.find_first_not_of(" \t\r\n;") != std::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("prepare \"", ToAbsl(sql), "\": more than one statement (use Exec)"));
  }
  return result;
}

absl::StatusOr<CachedStatement> Db::Cached(std::string_view sql) {
  auto it = cache_.find(ToAbsl(sql));
  if (it == cache_.end()) {
    ASSIGN_OR_RETURN(Statement stmt, Prepare(sql));
    it = cache_.emplace(std::string(sql), std::make_unique<Statement>(std::move(stmt))).first;
  }
  // Reset on the way out too: a caller may have left it mid-iteration via an error path.
  it->second->Reset();
  return CachedStatement(it->second.get());
}

absl::StatusOr<int64_t> Db::QueryInt(std::string_view sql) {
  ASSIGN_OR_RETURN(Statement stmt, Prepare(sql));
  ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return absl::NotFoundError(absl::StrCat("no row from \"", ToAbsl(sql), "\""));
  return stmt.ColumnInt(0);
}

absl::StatusOr<std::string> Db::QueryText(std::string_view sql) {
  ASSIGN_OR_RETURN(Statement stmt, Prepare(sql));
  ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return absl::NotFoundError(absl::StrCat("no row from \"", ToAbsl(sql), "\""));
  return stmt.ColumnText(0);
}

absl::StatusOr<int> Db::UserVersion() {
  ASSIGN_OR_RETURN(int64_t version, QueryInt("PRAGMA user_version"));
  return static_cast<int>(version);
}

absl::Status Db::Migrate(std::span<const Migration> steps) {
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].version != static_cast<int>(i) + 1) {
      return absl::InvalidArgumentError(absl::StrCat("migration step ", i, " has version ",
                                                     steps[i].version, ", expected ", i + 1));
    }
  }
  const int latest = static_cast<int>(steps.size());
  ASSIGN_OR_RETURN(int current, UserVersion());
  if (current > latest) {
    return absl::FailedPreconditionError(absl::StrCat(
        "database ", path_, " has schema version ", current,
        ", newer than the newest this binary knows (", latest,
        "); refusing to use it (it was written by a newer release; downgrade is not supported)"));
  }
  for (const Migration& step : steps) {
    if (step.version <= current) continue;
    RETURN_IF_ERROR(ApplyStep(step));
  }
  return absl::OkStatus();
}

absl::Status Db::ApplyStep(const Migration& step) {
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(*this, Transaction::Mode::kImmediate));
  // Re-read under the write lock: another process may have migrated meanwhile.
  ASSIGN_OR_RETURN(int current, UserVersion());
  if (current >= step.version) return txn.Commit();
  if (current != step.version - 1) {
    return absl::FailedPreconditionError(absl::StrCat("database ", path_, " is at schema version ",
                                                      current, ", cannot apply step ",
                                                      step.version));
  }
  if (!step.sql.empty()) {
    absl::Status status = Exec(step.sql);
    if (!status.ok()) {
      return absl::Status(status.code(), absl::StrCat("migration to schema version ", step.version,
                                                      " of ", path_, ": ", status.message()));
    }
  }
  if (step.apply) RETURN_IF_ERROR(step.apply(*this));
  RETURN_IF_ERROR(Exec(absl::StrCat("PRAGMA user_version=", step.version)));
  RETURN_IF_ERROR(txn.Commit());
  LOG(INFO) << "sqlite " << path_ << ": migrated schema to version " << step.version;
  return absl::OkStatus();
}

absl::Status Db::CheckIntegrity(bool quick) {
  ASSIGN_OR_RETURN(Statement stmt,
                   Prepare(quick ? "PRAGMA quick_check" : "PRAGMA integrity_check"));
  std::string report;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    std::string line = stmt.ColumnText(0);
    if (line == "ok") continue;
    if (!report.empty()) report += "; ";
    report += line;
  }
  if (report.empty()) return absl::OkStatus();
  return absl::DataLossError(absl::StrCat("sqlite database ", path_, " failed ",
                                          quick ? "quick_check" : "integrity_check", ": ", report));
}

int64_t Db::LastInsertRowId() const { return sqlite3_last_insert_rowid(db_.get()); }

int64_t Db::Changes() const { return sqlite3_changes64(db_.get()); }

bool Db::InTransaction() const { return sqlite3_get_autocommit(db_.get()) == 0; }

// ---------------------------------------------------------------------------------------------
// Transaction

absl::StatusOr<Transaction> Transaction::Begin(Db& db, Mode mode) {
  const char* sql = mode == Mode::kDeferred    ? "BEGIN DEFERRED"
                    : mode == Mode::kImmediate ? "BEGIN IMMEDIATE"
                                               : "BEGIN EXCLUSIVE";
  ASSIGN_OR_RETURN(CachedStatement begin, db.Cached(sql));
  RETURN_IF_ERROR(begin->Exec().status());
  return Transaction(&db);
}

Transaction::~Transaction() {
  if (db_ == nullptr) return;
  absl::Status status = Rollback();
  if (!status.ok()) LOG(ERROR) << "sqlite " << db_->path() << ": rollback: " << status.message();
}

absl::Status Transaction::Commit() {
  if (db_ == nullptr) return absl::FailedPreconditionError("transaction already finished");
  Db* db = db_;
  absl::StatusOr<CachedStatement> commit = db->Cached("COMMIT");
  absl::Status status = commit.ok() ? (*commit)->Exec().status() : commit.status();
  if (status.ok()) {
    db_ = nullptr;
    return status;
  }
  // A failed COMMIT may leave the transaction open (e.g. SQLITE_BUSY): roll it back so the
  // connection is usable and the caller sees all-or-nothing.
  absl::Status rollback = Rollback();
  if (!rollback.ok()) LOG(ERROR) << "sqlite " << db->path() << ": rollback after failed commit: "
                                 << rollback.message();
  return status;
}

absl::Status Transaction::Rollback() {
  if (db_ == nullptr) return absl::OkStatus();
  Db* db = db_;
  db_ = nullptr;
  // SQLite may already have rolled back on its own (e.g. after SQLITE_FULL or an interrupt).
  if (!db->InTransaction()) return absl::OkStatus();
  ASSIGN_OR_RETURN(CachedStatement rollback, db->Cached("ROLLBACK"));
  return rollback->Exec().status();
}

}  // namespace nereid::store
