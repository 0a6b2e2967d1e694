#include "localcontroller/db/lc_database.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/memory/memory.h"
#include "absl/strings/str_cat.h"
#include "common/log/log.h"
#include "common/process/unique_fd.h"
#include "common/status/macros.h"
#include "common/strings/absl_compat.h"
#include "localcontroller/db/schema.h"

namespace nereid::lc::db {
namespace {

bool IsFileBacked(const std::string& path) {
  return !path.empty() && path != ":memory:" && path.rfind("file:", 0) != 0;
}

absl::Status CreateParentDirectory(const std::string& path) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (parent.empty()) return absl::OkStatus();
  std::error_code ec;
  std::filesystem::create_directories(parent, ec);
  if (ec) {
    return absl::UnavailableError(absl::StrCat("cannot create directory ", parent.string(),
                                               " for database ", path, ": ", ec.message()));
  }
  return absl::OkStatus();
}

// The database holds storage credentials (the S3Credential of Datasets and Models), so it and its
// WAL/SHM/journal files are readable by the LC's user only: a new file is created 0600 before
// SQLite opens it (SQLite gives its WAL and SHM files the database file's mode), and an existing
// one with group or other bits is narrowed to 0600.
absl::Status RestrictFileMode(const std::string& path) {
  const UniqueFd created(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (!created.valid() && errno != EEXIST) {
    return absl::UnavailableError(
        absl::StrCat("cannot create database ", path, ": ", std::strerror(errno)));
  }
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    const std::string file = path + suffix;
    struct stat st;
    if (::stat(file.c_str(), &st) != 0 || (st.st_mode & 077) == 0) continue;
    if (::chmod(file.c_str(), st.st_mode & 0700) != 0) {
      return absl::PermissionDeniedError(absl::StrCat(
          "database ", file, " is readable by other users and cannot be restricted to 0600: ",
          std::strerror(errno)));
    }
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(st.st_mode & 07777));
    LOG(WARNING) << "lc database " << file << ": mode " << mode
                 << " narrowed to owner-only: it holds storage credentials";
  }
  return absl::OkStatus();
}

// Renames a corrupt database and its WAL/SHM files out of the way, keeping them for forensics.
absl::Status MoveAside(const std::string& path, Clock* clock) {
  const std::string target =
      absl::StrCat(path, ".corrupt-", absl::ToUnixSeconds(clock->Now()));
  for (const char* suffix : {"", "-wal", "-shm"}) {
    const std::string from = path + suffix;
    std::error_code ec;
    if (!std::filesystem::exists(from, ec)) continue;
    std::filesystem::rename(from, target + suffix, ec);
    if (ec) {
      return absl::UnavailableError(
          absl::StrCat("cannot move corrupt database ", from, " aside: ", ec.message()));
    }
  }
  LOG(WARNING) << "lc database " << path << " was corrupt; moved to " << target
               << " and starting empty (the GM resends the desired state)";
  return absl::OkStatus();
}

// Opens and verifies the file; DataLoss means it is corrupt.
absl::StatusOr<std::unique_ptr<store::Db>> OpenChecked(const LcDatabase::Options& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<store::Db> db, store::Db::Open(options.path, options.db));
  if (options.quick_check_on_open) RETURN_IF_ERROR(db->CheckIntegrity(/*quick=*/true));
  return db;
}

// Records the node on first use; refuses a database that belongs to another node.
absl::Status ClaimForNode(store::Db& db, const std::string& path, const std::string& node_name) {
  ASSIGN_OR_RETURN(store::Transaction txn, store::Transaction::Begin(db));
  Meta meta(db);
  ASSIGN_OR_RETURN(std::optional<std::string> owner, meta.Get(kMetaNodeName));
  if (!owner.has_value()) {
    RETURN_IF_ERROR(meta.Set(kMetaNodeName, node_name));
  } else if (*owner != node_name) {
    return absl::FailedPreconditionError(absl::StrCat(
        "database ", path, " belongs to node \"", *owner, "\", not \"", node_name,
        "\"; use that node's name or point --db at another file"));
  }
  return txn.Commit();
}

}  // namespace

absl::StatusOr<std::unique_ptr<LcDatabase>> LcDatabase::Open(Options options) {
  if (options.path.empty()) return absl::InvalidArgumentError("lc database: no path given");
  if (options.node_name.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("lc database ", options.path, ": no node name given"));
  }
  if (options.clock == nullptr) options.clock = Clock::Real();
  if (IsFileBacked(options.path)) {
    RETURN_IF_ERROR(CreateParentDirectory(options.path));
    RETURN_IF_ERROR(RestrictFileMode(options.path));
  }

  absl::StatusOr<std::unique_ptr<store::Db>> db = OpenChecked(options);
  if (absl::IsDataLoss(db.status()) && options.on_corruption == OnCorruption::kMoveAside &&
      IsFileBacked(options.path)) {
    LOG(ERROR) << "lc database " << options.path << ": " << db.status().message();
    RETURN_IF_ERROR(MoveAside(options.path, options.clock));
    RETURN_IF_ERROR(RestrictFileMode(options.path));
    db = OpenChecked(options);
  }
  if (!db.ok()) return db.status();
  // A deleted or replaced Dataset/Model takes its storage credential with it: freed space is
  // zeroed instead of keeping the old bytes in free pages.
  RETURN_IF_ERROR((*db)->Exec("PRAGMA secure_delete=ON"));
  RETURN_IF_ERROR((*db)->Migrate(Migrations()));
  RETURN_IF_ERROR(ClaimForNode(**db, options.path, options.node_name));
  return absl::WrapUnique(
      new LcDatabase(options.path, options.node_name, std::move(*db), options.clock));
}

LcDatabase::LcDatabase(std::string path, std::string node_name, std::unique_ptr<store::Db> db,
                       Clock* clock)
    : path_(std::move(path)),
      node_name_(std::move(node_name)),
      db_(std::move(db)),
      tables_{DesiredObjects(*db_, clock), DatasetCheckpoints(*db_, clock), Outbox(*db_, clock),
              Meta(*db_)},
      clock_(clock) {}

LcDatabase::~LcDatabase() = default;

absl::Status LcDatabase::Write(absl::FunctionRef<absl::Status(Tables&)> fn) {
  bool enqueued = false;
  absl::Status status;
  {
    absl::MutexLock lock(&mu_);
    status = WriteLocked(fn, &enqueued);
    RecordWriteOutcome(status);
  }
  if (enqueued) NotifyEnqueued();
  return status;
}

absl::Status LcDatabase::WriteLocked(absl::FunctionRef<absl::Status(Tables&)> fn,
                                     bool* enqueued) {
  const int64_t before = tables_.outbox.enqueue_calls();
  ASSIGN_OR_RETURN(store::Transaction txn, store::Transaction::Begin(*db_));
  RETURN_IF_ERROR(fn(tables_));
  RETURN_IF_ERROR(txn.Commit());
  *enqueued = tables_.outbox.enqueue_calls() != before;
  return absl::OkStatus();
}

void LcDatabase::RecordWriteOutcome(const absl::Status& status) {
  // How common/store maps SQLite's storage failures: SQLITE_FULL → ResourceExhausted, IOERR →
  // Unavailable, READONLY/PERM → PermissionDenied, CORRUPT → DataLoss.
  const bool storage_failure = absl::IsResourceExhausted(status) || absl::IsUnavailable(status) ||
                               absl::IsPermissionDenied(status) || absl::IsDataLoss(status);
  absl::MutexLock lock(&health_mu_);
  if (status.ok()) {
    if (!health_.error.ok()) {
      LOG(INFO) << "lc database " << path_ << ": writes commit again";
      health_.error = absl::OkStatus();
    }
    return;
  }
  if (!storage_failure) return;
  if (health_.error.ok()) {
    health_.failing_since = clock_->Now();
    LOG(ERROR) << "lc database " << path_ << ": writes are failing (disk full?): " << status;
  }
  health_.error = status;
  ++health_.failures;
}

LcDatabase::WriteHealth LcDatabase::write_health() const {
  absl::MutexLock lock(&health_mu_);
  return health_;
}

absl::Status LcDatabase::Read(absl::FunctionRef<absl::Status(Tables&)> fn) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(store::Transaction txn,
                   store::Transaction::Begin(*db_, store::Transaction::Mode::kDeferred));
  RETURN_IF_ERROR(fn(tables_));
  return txn.Commit();
}

// --- Desired objects.

absl::Status LcDatabase::Upsert(const ObjectRef& ref, std::string_view version,
                                std::string_view spec) {
  return Write([&](Tables& t) { return t.desired.Upsert(ref, version, spec); });
}

absl::StatusOr<bool> LcDatabase::Delete(const ObjectRef& ref) {
  bool deleted = false;
  RETURN_IF_ERROR(Write([&](Tables& t) -> absl::Status {
    ASSIGN_OR_RETURN(deleted, t.desired.Delete(ref));
    return absl::OkStatus();
  }));
  return deleted;
}

absl::StatusOr<DesiredObject> LcDatabase::Get(const ObjectRef& ref) {
  absl::MutexLock lock(&mu_);
  return tables_.desired.Get(ref);
}

absl::StatusOr<std::vector<DesiredObject>> LcDatabase::List(std::string_view kind) {
  absl::MutexLock lock(&mu_);
  return tables_.desired.List(kind);
}

absl::StatusOr<std::vector<InventoryEntry>> LcDatabase::Inventory() {
  absl::MutexLock lock(&mu_);
  return tables_.desired.Inventory();
}

// --- Datasets.

absl::Status LcDatabase::PutDatasetResult(std::string_view ns, std::string_view name,
                                          const DatasetResult& result) {
  return Write([&](Tables& t) { return t.datasets.PutResult(ns, name, result); });
}

absl::StatusOr<DatasetResult> LcDatabase::GetDatasetResult(std::string_view ns,
                                                           std::string_view name) {
  absl::MutexLock lock(&mu_);
  return tables_.datasets.GetResult(ns, name);
}

absl::Status LcDatabase::PutFileCheckpoint(std::string_view ns, std::string_view name,
                                           std::string_view path, std::string_view checkpoint) {
  return Write([&](Tables& t) { return t.datasets.PutFile(ns, name, path, checkpoint); });
}

absl::StatusOr<std::vector<FileCheckpoint>> LcDatabase::FileCheckpoints(std::string_view ns,
                                                                        std::string_view name) {
  absl::MutexLock lock(&mu_);
  return tables_.datasets.Files(ns, name);
}

// --- Outbox.

absl::StatusOr<int64_t> LcDatabase::Enqueue(const OutboxKey& key,
                                            std::string_view observed_version,
                                            std::string_view payload) {
  int64_t seq = 0;
  RETURN_IF_ERROR(Write([&](Tables& t) -> absl::Status {
    ASSIGN_OR_RETURN(seq, t.outbox.Enqueue(key, observed_version, payload));
    return absl::OkStatus();
  }));
  return seq;
}

absl::StatusOr<std::vector<OutboxEntry>> LcDatabase::Pending(int limit, int64_t after_seq) {
  absl::MutexLock lock(&mu_);
  return tables_.outbox.Pending(limit, after_seq);
}

absl::StatusOr<bool> LcDatabase::Ack(int64_t seq) {
  bool removed = false;
  RETURN_IF_ERROR(Write([&](Tables& t) -> absl::Status {
    ASSIGN_OR_RETURN(removed, t.outbox.Ack(seq));
    return absl::OkStatus();
  }));
  return removed;
}

absl::StatusOr<bool> LcDatabase::Reject(int64_t seq, std::string_view reason) {
  bool removed = false;
  RETURN_IF_ERROR(Write([&](Tables& t) -> absl::Status {
    ASSIGN_OR_RETURN(removed, t.outbox.Reject(seq, reason));
    return absl::OkStatus();
  }));
  return removed;
}

absl::StatusOr<int64_t> LcDatabase::OutboxDepth() {
  absl::MutexLock lock(&mu_);
  return tables_.outbox.Depth();
}

absl::StatusOr<OutboxStats> LcDatabase::GetOutboxStats() {
  OutboxStats stats;
  RETURN_IF_ERROR(Read([&](Tables& t) -> absl::Status {
    ASSIGN_OR_RETURN(stats, t.outbox.Stats());
    return absl::OkStatus();
  }));
  return stats;
}

void LcDatabase::SetOutboxListener(std::function<void()> listener) {
  absl::MutexLock lock(&listener_mu_);
  listener_ = std::move(listener);
}

void LcDatabase::NotifyEnqueued() {
  std::function<void()> listener;
  {
    absl::MutexLock lock(&listener_mu_);
    listener = listener_;
  }
  if (listener) listener();
}

// --- Meta.

absl::Status LcDatabase::SetMeta(std::string_view key, std::string_view value) {
  return Write([&](Tables& t) { return t.meta.Set(key, value); });
}

absl::StatusOr<std::optional<std::string>> LcDatabase::GetMeta(std::string_view key) {
  absl::MutexLock lock(&mu_);
  return tables_.meta.Get(key);
}

absl::Status LcDatabase::SetLastSync(absl::Time time) {
  return SetMeta(kMetaLastSync, absl::FormatTime(absl::RFC3339_full, time, absl::UTCTimeZone()));
}

absl::StatusOr<std::optional<absl::Time>> LcDatabase::LastSync() {
  ASSIGN_OR_RETURN(std::optional<std::string> text, GetMeta(kMetaLastSync));
  if (!text.has_value()) return std::optional<absl::Time>();
  absl::Time time;
  std::string error;
  if (!absl::ParseTime(absl::RFC3339_full, *text, &time, &error)) {
    return absl::DataLossError(absl::StrCat("lc database ", path_, ": meta ", kMetaLastSync,
                                            " is not a time (\"", *text, "\"): ", error));
  }
  return std::optional<absl::Time>(time);
}

absl::Status LcDatabase::CheckIntegrity() {
  absl::MutexLock lock(&mu_);
  return db_->CheckIntegrity();
}

}  // namespace nereid::lc::db
