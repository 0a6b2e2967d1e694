#include "localcontroller/db/lc_database.h"

#include <sys/stat.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/store/sqlite_db.h"
#include "common/time/fake_clock.h"
#include "localcontroller/db/schema.h"
#include "tests/localcontroller/db/test_util.h"

namespace nereid::lc::db {
namespace {

using testing::DatasetRef;
using testing::MakeOptions;
using testing::OpenOrDie;
using testing::Ref;
using testing::TempDir;

bool Contains(absl::string_view haystack, absl::string_view needle) {
  return haystack.find(needle) != absl::string_view::npos;
}

TEST_CASE("a fresh database is created at the current schema version, in a new directory") {
  TempDir dir;
  const std::string path = dir.File("var/lib/nereid/lc.db");
  {
    auto db = OpenOrDie(MakeOptions(path));
    CHECK(db->path() == path);
    CHECK(db->node_name() == "node-a");
    REQUIRE(db->Upsert(Ref("Model", "ns", "m1", "u1"), "1", "spec").ok());
  }
  auto raw = store::Db::Open(path);
  REQUIRE(raw.ok());
  CHECK(*(*raw)->UserVersion() == static_cast<int>(Migrations().size()));
  CHECK(*(*raw)->QueryText("PRAGMA journal_mode") == "wal");

  SECTION("re-opening at the current version keeps the data") {
    raw->reset();
    auto db = OpenOrDie(MakeOptions(path));
    auto obj = db->Get(Ref("Model", "ns", "m1"));
    REQUIRE(obj.ok());
    CHECK(obj->spec == "spec");
  }
  SECTION("a database written by a newer release is refused with a clear error") {
    REQUIRE((*raw)->Exec("PRAGMA user_version=99").ok());
    raw->reset();
    auto db = LcDatabase::Open(MakeOptions(path));
    REQUIRE_FALSE(db.ok());
    CHECK(db.status().code() == absl::StatusCode::kFailedPrecondition);
    CHECK(Contains(db.status().message(), "schema version 99"));
    CHECK(Contains(db.status().message(), "newer"));
  }
}

TEST_CASE("a database belongs to the node that created it") {
  TempDir dir;
  const std::string path = dir.File("lc.db");
  { OpenOrDie(MakeOptions(path, Clock::Real(), "edge-1")); }
  auto other = LcDatabase::Open(MakeOptions(path, Clock::Real(), "edge-2"));
  REQUIRE_FALSE(other.ok());
  CHECK(other.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(Contains(other.status().message(), "\"edge-1\""));
  CHECK(Contains(other.status().message(), "\"edge-2\""));
  CHECK(LcDatabase::Open(MakeOptions(path, Clock::Real(), "edge-1")).ok());

  CHECK(LcDatabase::Open(MakeOptions(path, Clock::Real(), "")).status().code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(LcDatabase::Open(MakeOptions("", Clock::Real(), "edge-1")).status().code() ==
        absl::StatusCode::kInvalidArgument);
}

TEST_CASE("a corrupt file is refused, or moved aside when asked") {
  TempDir dir;
  const std::string path = dir.File("lc.db");
  std::ofstream(path) << std::string(10000, 'z');
  auto refused = LcDatabase::Open(MakeOptions(path));
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == absl::StatusCode::kDataLoss);

  FakeClock clock;
  auto options = MakeOptions(path, &clock);
  options.on_corruption = LcDatabase::OnCorruption::kMoveAside;
  auto db = OpenOrDie(options);
  CHECK(db->Inventory()->empty());
  const std::string aside = absl::StrCat(path, ".corrupt-", absl::ToUnixSeconds(clock.Now()));
  CHECK(std::filesystem::file_size(aside) == 10000);
}

TEST_CASE("desired objects: upsert, get, list, delete") {
  FakeClock clock;
  auto db = OpenOrDie(MakeOptions(":memory:", &clock));
  REQUIRE(db->Upsert(Ref("Dataset", "default", "b", "u-b"), "3", "B3").ok());
  REQUIRE(db->Upsert(Ref("Dataset", "default", "a", "u-a"), "1", "A1").ok());
  REQUIRE(db->Upsert(Ref("Model", "default", "a", "u-ma"), "7", std::string("\0\1", 2)).ok());

  auto a = db->Get(Ref("Dataset", "default", "a"));
  REQUIRE(a.ok());
  CHECK(a->ref.uid == "u-a");
  CHECK(a->version == "1");
  CHECK(a->spec == "A1");
  CHECK(a->updated_at == clock.Now());
  CHECK(db->Get(Ref("Model", "default", "a"))->spec == std::string("\0\1", 2));

  clock.Advance(absl::Seconds(5));
  REQUIRE(db->Upsert(Ref("Dataset", "default", "a", "u-a2"), "2", "A2").ok());
  a = db->Get(Ref("Dataset", "default", "a"));
  CHECK(a->ref.uid == "u-a2");
  CHECK(a->version == "2");
  CHECK(a->spec == "A2");
  CHECK(a->updated_at == clock.Now());

  auto datasets = db->List("Dataset");
  REQUIRE(datasets.ok());
  REQUIRE(datasets->size() == 2);
  CHECK((*datasets)[0].ref.name == "a");
  CHECK((*datasets)[1].ref.name == "b");
  CHECK(db->List("Nothing")->empty());

  CHECK(*db->Delete(Ref("Dataset", "default", "b")) == true);
  CHECK(*db->Delete(Ref("Dataset", "default", "b")) == false);  // idempotent
  CHECK(absl::IsNotFound(db->Get(Ref("Dataset", "default", "b")).status()));
  CHECK(db->List("Dataset")->size() == 1);

  CHECK(db->Upsert(Ref("Dataset", "default", ""), "1", "x").code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(db->Upsert(Ref("", "default", "n"), "1", "x").code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("inventory lists every ref and version in key order") {
  auto db = OpenOrDie(MakeOptions(":memory:"));
  REQUIRE(db->Upsert(Ref("Model", "ns2", "m", "um"), "9", "m").ok());
  REQUIRE(db->Upsert(Ref("Dataset", "ns1", "d", "ud"), "4", "d").ok());
  REQUIRE(db->Upsert(Ref("Dataset", "ns0", "d", "ud0"), "5", "d").ok());
  auto inventory = db->Inventory();
  REQUIRE(inventory.ok());
  REQUIRE(inventory->size() == 3);
  CHECK((*inventory)[0].ref.DebugString() == "Dataset ns0/d");
  CHECK((*inventory)[0].ref.uid == "ud0");
  CHECK((*inventory)[0].version == "5");
  CHECK((*inventory)[1].ref.DebugString() == "Dataset ns1/d");
  CHECK((*inventory)[2].ref.DebugString() == "Model ns2/m");
  CHECK((*inventory)[2].version == "9");
  REQUIRE(*db->Delete(Ref("Dataset", "ns1", "d")));
  CHECK(db->Inventory()->size() == 2);
}

TEST_CASE("dataset results and file checkpoints live and die with the Dataset") {
  FakeClock clock;
  auto db = OpenOrDie(MakeOptions(":memory:", &clock));

  // Nothing can be written for a dataset the GM did not send.
  CHECK(absl::IsNotFound(db->PutFileCheckpoint("ns", "ds", "/data/a.txt", "cp")));
  CHECK(absl::IsNotFound(db->PutDatasetResult("ns", "ds", DatasetResult{5, "", "", clock.Now()})));
  // ... nor for a same-named object of another kind.
  REQUIRE(db->Upsert(Ref("Model", "ns", "ds"), "1", "m").ok());
  CHECK(absl::IsNotFound(db->PutFileCheckpoint("ns", "ds", "/data/a.txt", "cp")));

  REQUIRE(db->Upsert(DatasetRef("ns", "ds"), "1", "spec").ok());
  CHECK(absl::IsNotFound(db->GetDatasetResult("ns", "ds").status()));
  REQUIRE(db->PutFileCheckpoint("ns", "ds", "/data/b.txt", "cp-b").ok());
  REQUIRE(db->PutFileCheckpoint("ns", "ds", "/data/a.txt", "cp-a1").ok());
  clock.Advance(absl::Seconds(1));
  REQUIRE(db->PutFileCheckpoint("ns", "ds", "/data/a.txt", "cp-a2").ok());
  REQUIRE(db->PutDatasetResult("ns", "ds", DatasetResult{0, "", "", clock.Now()}).ok());

  auto files = db->FileCheckpoints("ns", "ds");
  REQUIRE(files.ok());
  REQUIRE(files->size() == 2);
  CHECK((*files)[0].path == "/data/a.txt");
  CHECK((*files)[0].data == "cp-a2");
  CHECK((*files)[0].updated_at == clock.Now());
  CHECK((*files)[1].data == "cp-b");

  auto result = db->GetDatasetResult("ns", "ds");
  REQUIRE(result.ok());
  REQUIRE(result->count.has_value());
  CHECK(*result->count == 0);  // zero is a result, not "nothing"
  CHECK(result->error_reason.empty());

  REQUIRE(db->PutDatasetResult("ns", "ds",
                               DatasetResult{std::nullopt, "UnknownFormat", "format \"x\"",
                                             clock.Now()})
              .ok());
  result = db->GetDatasetResult("ns", "ds");
  CHECK_FALSE(result->count.has_value());
  CHECK(result->error_reason == "UnknownFormat");
  CHECK(result->error_message == "format \"x\"");

  // A spec update keeps the scan state (updated in place, no cascade).
  REQUIRE(db->Upsert(DatasetRef("ns", "ds"), "2", "spec2").ok());
  CHECK(db->FileCheckpoints("ns", "ds")->size() == 2);
  CHECK(db->GetDatasetResult("ns", "ds").ok());

  REQUIRE(db->Write([](LcDatabase::Tables& t) -> absl::Status {
    auto removed = t.datasets.DeleteFile("ns", "ds", "/data/b.txt");
    if (!removed.ok()) return removed.status();
    return *removed ? absl::OkStatus() : absl::InternalError("not removed");
  }).ok());
  CHECK(db->FileCheckpoints("ns", "ds")->size() == 1);

  // Deleting the Dataset deletes its scan state in the same transaction.
  REQUIRE(*db->Delete(DatasetRef("ns", "ds")));
  CHECK(db->FileCheckpoints("ns", "ds")->empty());
  CHECK(absl::IsNotFound(db->GetDatasetResult("ns", "ds").status()));
  // Re-created: starts from scratch.
  REQUIRE(db->Upsert(DatasetRef("ns", "ds"), "3", "spec3").ok());
  CHECK(db->FileCheckpoints("ns", "ds")->empty());
}

TEST_CASE("Write is all-or-nothing") {
  auto db = OpenOrDie(MakeOptions(":memory:"));
  REQUIRE(db->Upsert(DatasetRef("ns", "keep"), "1", "s").ok());
  absl::Status status = db->Write([](LcDatabase::Tables& t) -> absl::Status {
    absl::Status s = t.desired.Upsert(DatasetRef("ns", "new"), "1", "s");
    if (!s.ok()) return s;
    auto seq = t.outbox.Enqueue(OutboxKey{DatasetRef("ns", "new"), kReportDatasetStatus, ""}, "1",
                                "p");
    if (!seq.ok()) return seq.status();
    s = t.datasets.PutFile("ns", "new", "/f", "cp");
    if (!s.ok()) return s;
    return absl::AbortedError("caller changed its mind");
  });
  CHECK(status.code() == absl::StatusCode::kAborted);
  CHECK(absl::IsNotFound(db->Get(DatasetRef("ns", "new")).status()));
  CHECK(*db->OutboxDepth() == 0);
  CHECK(db->GetOutboxStats()->enqueued == 0);
  CHECK(db->Inventory()->size() == 1);

  // The same batch without the error commits everything at once.
  REQUIRE(db->Write([](LcDatabase::Tables& t) -> absl::Status {
    for (int i = 0; i < 10; ++i) {
      absl::Status s = t.desired.Upsert(DatasetRef("ns", absl::StrCat("d", i)), "1", "s");
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }).ok());
  CHECK(db->Inventory()->size() == 11);

  SECTION("Read sees a consistent snapshot") {
    size_t inventory = 0;
    int64_t depth = -1;
    REQUIRE(db->Read([&](LcDatabase::Tables& t) -> absl::Status {
      auto inv = t.desired.Inventory();
      if (!inv.ok()) return inv.status();
      inventory = inv->size();
      auto d = t.outbox.Depth();
      if (!d.ok()) return d.status();
      depth = *d;
      return absl::OkStatus();
    }).ok());
    CHECK(inventory == 11);
    CHECK(depth == 0);
  }
}

TEST_CASE("meta values and the last sync time persist") {
  TempDir dir;
  const std::string path = dir.File("lc.db");
  const absl::Time sync = absl::FromUnixMicros(1'700'000'123'456'789);
  {
    auto db = OpenOrDie(MakeOptions(path));
    CHECK(*db->GetMeta(kMetaNodeName) == "node-a");
    CHECK_FALSE(db->LastSync()->has_value());
    REQUIRE(db->SetMeta("k", "v1").ok());
    REQUIRE(db->SetMeta("k", "v2").ok());
    REQUIRE(db->SetLastSync(sync).ok());
  }
  auto db = OpenOrDie(MakeOptions(path));
  CHECK(*db->GetMeta("k") == "v2");
  CHECK_FALSE(db->GetMeta("absent")->has_value());
  auto last = db->LastSync();
  REQUIRE(last.ok());
  REQUIRE(last->has_value());
  CHECK(**last == sync);
  REQUIRE(db->SetMeta(kMetaLastSync, "yesterday").ok());
  CHECK(db->LastSync().status().code() == absl::StatusCode::kDataLoss);
}

TEST_CASE("the outbox listener fires after commits that enqueued") {
  auto db = OpenOrDie(MakeOptions(":memory:"));
  int calls = 0;
  db->SetOutboxListener([&calls] { ++calls; });
  REQUIRE(db->Upsert(DatasetRef("ns", "d"), "1", "s").ok());
  CHECK(calls == 0);
  REQUIRE(db->Enqueue(OutboxKey{DatasetRef("ns", "d"), kReportDatasetStatus, ""}, "1", "p").ok());
  CHECK(calls == 1);
  CHECK_FALSE(db->Write([](LcDatabase::Tables& t) -> absl::Status {
    auto seq = t.outbox.Enqueue(OutboxKey{DatasetRef("ns", "d"), kReportDatasetStatus, ""}, "2",
                                "p");
    if (!seq.ok()) return seq.status();
    return absl::CancelledError("rolled back");
  }).ok());
  CHECK(calls == 1);  // nothing committed, nothing to send
  REQUIRE(db->Ack(1).ok());
  CHECK(calls == 1);
  db->SetOutboxListener(nullptr);
  REQUIRE(db->Enqueue(OutboxKey{DatasetRef("ns", "d"), kReportDatasetStatus, ""}, "3", "p").ok());
  CHECK(calls == 1);
}

TEST_CASE("concurrent writers and readers on one LcDatabase stay consistent") {
  TempDir dir;
  auto db = OpenOrDie(MakeOptions(dir.File("lc.db")));
  constexpr int kPerThread = 200;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        const ObjectRef ref = DatasetRef("ns", absl::StrCat("t", t, "-", i % 10));
        bool ok = db->Upsert(ref, absl::StrCat(i), "spec").ok();
        auto seq = db->Enqueue(OutboxKey{ref, kReportDatasetStatus, ""}, absl::StrCat(i), "p");
        ok = ok && seq.ok();
        if (ok && i % 3 == 0) ok = db->Ack(*seq).ok();
        ok = ok && db->Pending(50).ok() && db->Inventory().ok();
        if (!ok) ++failures;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(failures == 0);
  auto stats = db->GetOutboxStats();
  REQUIRE(stats.ok());
  CHECK(stats->enqueued == 3 * kPerThread);
  CHECK(stats->last_seq == 3 * kPerThread);
  CHECK(stats->enqueued == stats->replaced + stats->acked + stats->rejected + stats->depth);
  CHECK(stats->depth <= 30);  // bounded by the number of keys
  CHECK(db->Inventory()->size() == 30);
  CHECK(db->CheckIntegrity().ok());
}

}  // namespace
}  // namespace nereid::lc::db

namespace nereid::lc::db {
namespace {

mode_t ModeOf(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? (st.st_mode & 0777) : 0;
}

TEST_CASE("the database holds credentials, so its files are owner-only") {
  testing::TempDir dir;
  const std::string path = dir.File("lc.db");
  {
    auto db = testing::OpenOrDie(testing::MakeOptions(path));
    REQUIRE(db->Upsert(testing::Ref("Dataset", "ns", "d1", "u1"), "1", "spec").ok());
    CHECK(ModeOf(path) == 0600);
    CHECK(ModeOf(path + "-wal") == 0600);  // SQLite gives the WAL the database file's mode
  }
  // A file made wider by hand (or by an older release) is narrowed at the next start.
  std::filesystem::permissions(path, std::filesystem::perms(0644));
  auto db = testing::OpenOrDie(testing::MakeOptions(path));
  CHECK(ModeOf(path) == 0600);
  CHECK(db->Get(testing::Ref("Dataset", "ns", "d1"))->spec == "spec");
}

TEST_CASE("a deleted object leaves no bytes behind (secure_delete)") {
  testing::TempDir dir;
  const std::string path = dir.File("lc.db");
  const std::string secret = "credential-bytes-that-must-go-0123456789";
  {
    auto db = testing::OpenOrDie(testing::MakeOptions(path));
    REQUIRE(db->Upsert(testing::Ref("Dataset", "ns", "d1", "u1"), "1", "spec " + secret).ok());
    REQUIRE(db->Upsert(testing::Ref("Dataset", "ns", "d2", "u2"), "1", "other").ok());
    REQUIRE(db->Delete(testing::Ref("Dataset", "ns", "d1")).ok());
  }  // the last connection closes: the WAL is checkpointed into the file and removed
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  CHECK(bytes.find("other") != std::string::npos);
  CHECK(bytes.find(secret) == std::string::npos);
}

}  // namespace
}  // namespace nereid::lc::db
