#include "common/store/sqlite_db.h"

#include <sqlite3.h>
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace nereid::store {
namespace {

// A fresh directory under /tmp, removed with everything in it at scope exit.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = "/tmp/nereid-store-test-XXXXXX";
    char* dir = mkdtemp(tmpl.data());
    REQUIRE(dir != nullptr);
    path_ = dir;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::unique_ptr<Db> OpenOrDie(const std::string& path, const DbOptions& options = {}) {
  absl::StatusOr<std::unique_ptr<Db>> db = Db::Open(path, options);
  INFO(db.status().ToString());
  REQUIRE(db.ok());
  return std::move(*db);
}

TEST_CASE("Open applies WAL, synchronous=NORMAL, foreign keys, busy timeout, small cache") {
  TempDir dir;
  auto db = OpenOrDie(dir.File("a.db"));
  CHECK(*db->QueryText("PRAGMA journal_mode") == "wal");
  CHECK(*db->QueryInt("PRAGMA synchronous") == 1);  // NORMAL
  CHECK(*db->QueryInt("PRAGMA foreign_keys") == 1);
  CHECK(*db->QueryInt("PRAGMA busy_timeout") == 5000);
  CHECK(*db->QueryInt("PRAGMA cache_size") == -1024);
  CHECK(*db->QueryInt("PRAGMA mmap_size") == 0);
  CHECK(std::filesystem::exists(dir.File("a.db")));
}

TEST_CASE("Open failures are clear errors") {
  TempDir dir;
  SECTION("missing directory") {
    auto db = Db::Open(dir.File("no/such/dir/a.db"));
    REQUIRE_FALSE(db.ok());
    CHECK(db.status().message().find("no/such/dir/a.db") != absl::string_view::npos);
    CHECK(SqliteCode(db.status()) == SQLITE_CANTOPEN);
  }
  SECTION("create=false and no file") {
    DbOptions options;
    options.create = false;
    CHECK_FALSE(Db::Open(dir.File("absent.db"), options).ok());
    CHECK_FALSE(std::filesystem::exists(dir.File("absent.db")));
  }
  SECTION("not a database") {
    std::ofstream(dir.File("junk.db")) << std::string(8192, 'x');
    auto db = Db::Open(dir.File("junk.db"));
    REQUIRE_FALSE(db.ok());
    CHECK(db.status().code() == absl::StatusCode::kDataLoss);
  }
  SECTION("bad synchronous mode") {
    DbOptions options;
    options.synchronous = "sometimes";
    CHECK(Db::Open(dir.File("a.db"), options).status().code() ==
          absl::StatusCode::kInvalidArgument);
  }
}

TEST_CASE("Statement binds by index and name and reads every column type") {
  auto db = OpenOrDie(":memory:");
  REQUIRE(db->Exec("CREATE TABLE t(k TEXT PRIMARY KEY, i INTEGER, d REAL, b BLOB, n TEXT)").ok());
  const std::string blob("a\0b\xff", 4);
  {
    auto insert = db->Prepare("INSERT INTO t VALUES(?1, ?2, ?3, ?4, ?5)");
    REQUIRE(insert.ok());
    insert->BindText(1, "k1").BindInt(2, int64_t{1} << 40).BindDouble(3, 2.5).BindBlob(4, blob)
        .BindNull(5);
    auto changed = insert->Exec();
    REQUIRE(changed.ok());
    CHECK(*changed == 1);
  }
  {
    auto insert = db->Prepare("INSERT INTO t(k, b) VALUES(:key, :bytes)");
    REQUIRE(insert.ok());
    insert->BindText(":key", "k2").BindBlob(":bytes", std::string_view());
    REQUIRE(insert->Exec().ok());
  }
  auto select = db->Prepare("SELECT k, i, d, b, n, typeof(b) FROM t ORDER BY k");
  REQUIRE(select.ok());
  REQUIRE(*select->Step());
  CHECK(select->ColumnCount() == 6);
  CHECK(select->ColumnName(0) == "k");
  CHECK(select->ColumnText(0) == "k1");
  CHECK(select->ColumnInt(1) == int64_t{1} << 40);
  CHECK(select->ColumnDouble(2) == 2.5);
  CHECK(select->ColumnBlob(3) == blob);
  CHECK(select->IsNull(4));
  REQUIRE(*select->Step());
  CHECK(select->ColumnText(0) == "k2");
  CHECK(select->ColumnText(5) == "blob");  // an empty blob is a blob, not NULL
  CHECK(select->ColumnBlob(3).empty());
  CHECK_FALSE(*select->Step());

  // An empty string_view (null data pointer) binds '' rather than NULL.
  auto empty = db->Prepare("SELECT typeof(?1), length(?1)");
  REQUIRE(empty.ok());
  empty->BindText(1, std::string_view());
  REQUIRE(*empty->Step());
  CHECK(empty->ColumnText(0) == "text");
  CHECK(empty->ColumnInt(1) == 0);
}

TEST_CASE("bind errors surface at Step with the parameter and SQL") {
  auto db = OpenOrDie(":memory:");
  REQUIRE(db->Exec("CREATE TABLE t(k TEXT)").ok());
  auto stmt = db->Prepare("INSERT INTO t VALUES(:k)");
  REQUIRE(stmt.ok());
  stmt->BindText(":nope", "x");
  absl::StatusOr<bool> step = stmt->Step();
  REQUIRE_FALSE(step.ok());
  CHECK(step.status().message().find(":nope") != absl::string_view::npos);
  stmt->Reset();
  stmt->BindText(7, "x");
  step = stmt->Step();
  REQUIRE_FALSE(step.ok());
  CHECK(step.status().code() == absl::StatusCode::kInvalidArgument);  // SQLITE_RANGE
  CHECK(*db->QueryInt("SELECT count(*) FROM t") == 0);
}

TEST_CASE("SQL and constraint errors map to status codes with SQLite's text") {
  auto db = OpenOrDie(":memory:");
  REQUIRE(db->Exec("CREATE TABLE p(id INTEGER PRIMARY KEY);"
                   "CREATE TABLE c(id INTEGER PRIMARY KEY, p INTEGER NOT NULL REFERENCES p(id));"
                   "CREATE TABLE u(k TEXT UNIQUE)")
              .ok());
  auto bad = db->Prepare("SELEC 1");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("syntax error") != absl::string_view::npos);

  auto two = db->Prepare("SELECT 1; SELECT 2");
  CHECK(two.status().code() == absl::StatusCode::kInvalidArgument);

  REQUIRE(db->Exec("INSERT INTO u VALUES('a')").ok());
  absl::Status dup = db->Exec("INSERT INTO u VALUES('a')");
  CHECK(dup.code() == absl::StatusCode::kAlreadyExists);
  CHECK(SqliteCode(dup) == SQLITE_CONSTRAINT_UNIQUE);
  CHECK(dup.message().find("UNIQUE constraint failed: u.k") != absl::string_view::npos);

  absl::Status fk = db->Exec("INSERT INTO c VALUES(1, 42)");
  CHECK(fk.code() == absl::StatusCode::kFailedPrecondition);
  CHECK(SqliteCode(fk) == SQLITE_CONSTRAINT_FOREIGNKEY);

  absl::Status missing = db->Exec("SELECT * FROM nosuch");
  CHECK(missing.code() == absl::StatusCode::kInternal);
  CHECK(missing.message().find("no such table: nosuch") != absl::string_view::npos);

  CHECK(SqliteStatus(SQLITE_BUSY, nullptr, "x").code() == absl::StatusCode::kUnavailable);
  CHECK(SqliteStatus(SQLITE_CORRUPT, nullptr, "x").code() == absl::StatusCode::kDataLoss);
  CHECK(SqliteStatus(SQLITE_FULL, nullptr, "x").code() == absl::StatusCode::kResourceExhausted);
  CHECK(SqliteStatus(SQLITE_READONLY, nullptr, "x").code() ==
        absl::StatusCode::kPermissionDenied);
  CHECK(SqliteStatus(SQLITE_DONE, nullptr, "x").ok());
  CHECK_FALSE(SqliteCode(absl::InternalError("plain")).has_value());
}

TEST_CASE("cached statements are prepared once and come back reset") {
  auto db = OpenOrDie(":memory:");
  REQUIRE(db->Exec("CREATE TABLE t(k INTEGER); INSERT INTO t VALUES(1),(2),(3)").ok());
  Statement* first = nullptr;
  {
    auto stmt = db->Cached("SELECT k FROM t WHERE k >= ? ORDER BY k");
    REQUIRE(stmt.ok());
    first = &**stmt;
    (*stmt)->BindInt(1, 2);
    REQUIRE(*(*stmt)->Step());
    CHECK((*stmt)->ColumnInt(0) == 2);
    // Left mid-iteration on purpose: the next borrower must start from scratch.
  }
  auto again = db->Cached("SELECT k FROM t WHERE k >= ? ORDER BY k");
  REQUIRE(again.ok());
  CHECK(&**again == first);
  (*again)->BindInt(1, 1);
  REQUIRE(*(*again)->Step());
  CHECK((*again)->ColumnInt(0) == 1);
}

TEST_CASE("Transaction rolls back unless committed") {
  TempDir dir;
  auto db = OpenOrDie(dir.File("t.db"));
  REQUIRE(db->Exec("CREATE TABLE t(k INTEGER)").ok());
  {
    auto txn = Transaction::Begin(*db);
    REQUIRE(txn.ok());
    CHECK(db->InTransaction());
    REQUIRE(db->Exec("INSERT INTO t VALUES(1)").ok());
  }
  CHECK_FALSE(db->InTransaction());
  CHECK(*db->QueryInt("SELECT count(*) FROM t") == 0);
  {
    auto txn = Transaction::Begin(*db);
    REQUIRE(txn.ok());
    REQUIRE(db->Exec("INSERT INTO t VALUES(2)").ok());
    REQUIRE(txn->Commit().ok());
    CHECK_FALSE(txn->active());
    CHECK_FALSE(txn->Commit().ok());  // twice is an error, not a crash
  }
  CHECK(*db->QueryInt("SELECT count(*) FROM t") == 1);

  SECTION("nested BEGIN is an error") {
    auto outer = Transaction::Begin(*db);
    REQUIRE(outer.ok());
    CHECK_FALSE(Transaction::Begin(*db).ok());
    CHECK(db->InTransaction());
  }
  SECTION("explicit rollback") {
    auto txn = Transaction::Begin(*db, Transaction::Mode::kDeferred);
    REQUIRE(txn.ok());
    REQUIRE(db->Exec("INSERT INTO t VALUES(3)").ok());
    REQUIRE(txn->Rollback().ok());
    CHECK(*db->QueryInt("SELECT count(*) FROM t") == 1);
  }
}

TEST_CASE("BEGIN IMMEDIATE excludes a second writer, which gets Unavailable after busy_timeout") {
  TempDir dir;
  auto a = OpenOrDie(dir.File("w.db"));
  REQUIRE(a->Exec("CREATE TABLE t(k INTEGER)").ok());
  DbOptions impatient;
  impatient.busy_timeout = absl::Milliseconds(50);
  auto b = OpenOrDie(dir.File("w.db"), impatient);
  auto txn = Transaction::Begin(*a);
  REQUIRE(txn.ok());
  auto other = Transaction::Begin(*b);
  REQUIRE_FALSE(other.ok());
  CHECK(other.status().code() == absl::StatusCode::kUnavailable);
  // Readers are not blocked by the WAL writer.
  CHECK(*b->QueryInt("SELECT count(*) FROM t") == 0);
  REQUIRE(txn->Commit().ok());
  CHECK(Transaction::Begin(*b).ok());
}

std::vector<Migration> Steps(int* applied_code_runs) {
  return {
      {1, "CREATE TABLE a(k TEXT PRIMARY KEY)"},
      {2, "CREATE TABLE b(k TEXT); CREATE INDEX b_k ON b(k)",
       [applied_code_runs](Db& db) -> absl::Status {
         ++*applied_code_runs;
         return db.Exec("INSERT INTO a VALUES('seeded')");
       }},
  };
}

TEST_CASE("migrations by user_version") {
  TempDir dir;
  const std::string path = dir.File("m.db");
  int runs = 0;
  {
    auto db = OpenOrDie(path);
    CHECK(*db->UserVersion() == 0);
    auto steps = Steps(&runs);
    REQUIRE(db->Migrate(steps).ok());
    CHECK(*db->UserVersion() == 2);
    CHECK(runs == 1);
    CHECK(*db->QueryInt("SELECT count(*) FROM a") == 1);
  }
  SECTION("reopen at the current version applies nothing") {
    auto db = OpenOrDie(path);
    auto steps = Steps(&runs);
    REQUIRE(db->Migrate(steps).ok());
    CHECK(runs == 1);
    CHECK(*db->QueryInt("SELECT count(*) FROM a") == 1);
  }
  SECTION("a new step applies alone") {
    auto db = OpenOrDie(path);
    auto steps = Steps(&runs);
    steps.push_back({3, "ALTER TABLE a ADD COLUMN v INTEGER NOT NULL DEFAULT 7"});
    REQUIRE(db->Migrate(steps).ok());
    CHECK(runs == 1);
    CHECK(*db->UserVersion() == 3);
    CHECK(*db->QueryInt("SELECT v FROM a") == 7);
  }
  SECTION("a database from a newer release is refused") {
    auto db = OpenOrDie(path);
    REQUIRE(db->Exec("PRAGMA user_version=9").ok());
    auto steps = Steps(&runs);
    absl::Status status = db->Migrate(steps);
    CHECK(status.code() == absl::StatusCode::kFailedPrecondition);
    CHECK(status.message().find("schema version 9") != absl::string_view::npos);
    CHECK(status.message().find("newer") != absl::string_view::npos);
  }
  SECTION("a failing step leaves the previous version intact") {
    auto db = OpenOrDie(path);
    auto steps = Steps(&runs);
    steps.push_back({3, "CREATE TABLE c(k TEXT); CREATE TABLE a(k TEXT)"});  // a exists
    absl::Status status = db->Migrate(steps);
    CHECK_FALSE(status.ok());
    CHECK(status.message().find("schema version 3") != absl::string_view::npos);
    CHECK(*db->UserVersion() == 2);
    CHECK_FALSE(db->Exec("SELECT * FROM c").ok());  // rolled back with the step
  }
  SECTION("misnumbered steps are a programming error") {
    auto db = OpenOrDie(path);
    std::vector<Migration> steps = {{1, "SELECT 1"}, {3, "SELECT 1"}};
    CHECK(db->Migrate(steps).code() == absl::StatusCode::kInvalidArgument);
  }
}

TEST_CASE("integrity check passes on a healthy database") {
  TempDir dir;
  auto db = OpenOrDie(dir.File("i.db"));
  REQUIRE(db->Exec("CREATE TABLE t(k TEXT PRIMARY KEY); INSERT INTO t VALUES('x')").ok());
  CHECK(db->CheckIntegrity().ok());
  CHECK(db->CheckIntegrity(/*quick=*/true).ok());
}

}  // namespace
}  // namespace nereid::store
