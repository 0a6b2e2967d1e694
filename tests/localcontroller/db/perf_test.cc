// Throughput and footprint of the LC database, printed as "PERF ..." lines (see the report in the
// commit log). Assertions are loose floors so a loaded CI machine does not flake; the numbers are
// the point. The database lives under /tmp (ext4 here, so commits pay real WAL writes).

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "localcontroller/db/lc_database.h"
#include "tests/localcontroller/db/test_util.h"

namespace nereid::lc::db {
namespace {

using testing::DatasetRef;
using testing::MakeOptions;
using testing::OpenOrDie;
using testing::TempDir;

// kB value of a /proc/self/status field such as "VmHWM".
int64_t ProcStatusKb(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stoll(line.substr(field.size() + 1));
  }
  return -1;
}

double PerSecond(int64_t n, absl::Duration d) { return n / absl::ToDoubleSeconds(d); }

TEST_CASE("enqueue+ack throughput") {
  TempDir dir;
  auto db = OpenOrDie(MakeOptions(dir.File("lc.db")));
  const std::string payload(200, 'p');  // a dataset status report is ~100-200 bytes
  constexpr int kPairs = 3000;

  // One transaction per enqueue and per ack: what the scanner and the cloud link do.
  absl::Time start = absl::Now();
  for (int i = 0; i < kPairs; ++i) {
    const OutboxKey key{DatasetRef("ns", absl::StrCat("d", i % 100)), kReportDatasetStatus, ""};
    auto seq = db->Enqueue(key, absl::StrCat(i), payload);
    REQUIRE(seq.ok());
    REQUIRE(*db->Ack(*seq));
  }
  const double single = PerSecond(kPairs, absl::Now() - start);

  // Batched: 100 enqueues per transaction, then 100 acks per transaction.
  start = absl::Now();
  for (int batch = 0; batch < kPairs / 100; ++batch) {
    std::vector<int64_t> seqs;
    REQUIRE(db->Write([&](LcDatabase::Tables& t) -> absl::Status {
      for (int i = 0; i < 100; ++i) {
        const OutboxKey key{DatasetRef("ns", absl::StrCat("d", i)), kReportDatasetStatus, ""};
        auto seq = t.outbox.Enqueue(key, "1", payload);
        if (!seq.ok()) return seq.status();
        seqs.push_back(*seq);
      }
      return absl::OkStatus();
    }).ok());
    REQUIRE(db->Write([&](LcDatabase::Tables& t) -> absl::Status {
      for (int64_t seq : seqs) {
        auto removed = t.outbox.Ack(seq);
        if (!removed.ok()) return removed.status();
      }
      return absl::OkStatus();
    }).ok());
  }
  const double batched = PerSecond(kPairs, absl::Now() - start);

  // Replace-by-key while offline: many states for few keys stay a small outbox.
  start = absl::Now();
  for (int i = 0; i < kPairs; ++i) {
    const OutboxKey key{DatasetRef("ns", absl::StrCat("d", i % 10)), kReportDatasetStatus, ""};
    REQUIRE(db->Enqueue(key, absl::StrCat(i), payload).ok());
  }
  const double offline = PerSecond(kPairs, absl::Now() - start);
  CHECK(*db->OutboxDepth() == 10);

  std::cout << "PERF lc_db enqueue+ack, 1 txn each: " << static_cast<int64_t>(single)
            << " pairs/s (" << static_cast<int64_t>(2 * single) << " commits/s)\n"
            << "PERF lc_db enqueue+ack, 100 per txn: " << static_cast<int64_t>(batched)
            << " pairs/s\n"
            << "PERF lc_db enqueue replacing by key, 1 txn each: "
            << static_cast<int64_t>(offline) << " enqueues/s, depth stays 10\n";
  CHECK(single > 200);
  CHECK(batched > 2000);
}

TEST_CASE("footprint with 1,000 datasets tracked") {
  TempDir dir;
  const std::string path = dir.File("lc.db");
  const int64_t hwm_before = ProcStatusKb("VmHWM");
  auto db = OpenOrDie(MakeOptions(path));
  // Realistic sizes: a Dataset spec proto (url, format, node, ...) ~300 B, a file checkpoint
  // (dev, inode, size, mtime, offset, count, tail state, guard hash) ~150 B, a status report ~150 B.
  const std::string spec(300, 's');
  const std::string checkpoint(150, 'c');
  const std::string payload(150, 'p');
  constexpr int kDatasets = 1000;
  absl::Time start = absl::Now();
  for (int i = 0; i < kDatasets; ++i) {
    const std::string name = absl::StrCat("dataset-", i);
    REQUIRE(db->Write([&](LcDatabase::Tables& t) -> absl::Status {
      absl::Status s = t.desired.Upsert(DatasetRef("default", name), "12345", spec);
      if (!s.ok()) return s;
      s = t.datasets.PutFile("default", name, absl::StrCat("/rootfs/data/", name, "/train.txt"),
                             checkpoint);
      if (!s.ok()) return s;
      s = t.datasets.PutResult("default", name, DatasetResult{100000, "", "", absl::Now()});
      if (!s.ok()) return s;
      return t.outbox.Enqueue(OutboxKey{DatasetRef("default", name), kReportDatasetStatus, ""},
                              "12345", payload)
          .status();
    }).ok());
  }
  const absl::Duration fill = absl::Now() - start;

  start = absl::Now();
  auto inventory = db->Inventory();
  const absl::Duration inventory_time = absl::Now() - start;
  REQUIRE(inventory.ok());
  CHECK(inventory->size() == kDatasets);
  start = absl::Now();
  auto pending = db->Pending(100);
  const absl::Duration pending_time = absl::Now() - start;
  REQUIRE(pending.ok());
  CHECK(pending->size() == 100);
  start = absl::Now();
  auto depth = db->OutboxDepth();
  const absl::Duration depth_time = absl::Now() - start;
  CHECK(*depth == kDatasets);

  const int64_t hwm_after = ProcStatusKb("VmHWM");
  const int64_t wal_bytes = std::filesystem::file_size(path + "-wal");
  db.reset();  // the last connection's close checkpoints the WAL into the main file
  const int64_t db_bytes = std::filesystem::file_size(path);
  std::cout << "PERF lc_db 1000 datasets (desired + checkpoint + result + pending report each): "
            << "file " << db_bytes / 1024 << " KiB after close, WAL before close "
            << wal_bytes / 1024 << " KiB; fill " << absl::FormatDuration(fill)
            << " (1 txn per dataset); Inventory() " << absl::FormatDuration(inventory_time)
            << ", Pending(100) " << absl::FormatDuration(pending_time) << ", OutboxDepth() "
            << absl::FormatDuration(depth_time) << "; test process VmHWM " << hwm_before
            << " -> " << hwm_after << " kB\n";
  CHECK(db_bytes < 4 * 1024 * 1024);
  CHECK(hwm_after - hwm_before < 8 * 1024);  // the DB's share of the LC's 40 MB budget
}

}  // namespace
}  // namespace nereid::lc::db
