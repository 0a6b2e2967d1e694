// The LC database files of every earlier release (golden/<release>/lc.sqlite, written by that
// release's own database code) open with the current LocalController: migrated to the current
// schema, PRAGMA integrity_check clean, every desired object, dataset result and checkpoint read
// back to what was written, and the reports still in the outbox delivered in order and then gone.

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "localcontroller/cloudlink/lc_db_adapter.h"
#include "localcontroller/db/lc_database.h"
#include "tests/compat/golden_database.h"
#include "tests/compat/golden_files.h"
#include "tests/compat/release_0_1_0.h"
#include "tests/support/subprocess.h"

namespace nereid::compat {
namespace {

namespace release = release_0_1_0;
const std::string kGolden = NEREID_COMPAT_GOLDEN_DIR;

// A copy of the golden file (opening migrates and claims it: the checked-in file stays as written).
std::string CopyOf(const testing::TempDir& dir, const std::string& release_dir) {
  const std::string copy = dir.File("lc.sqlite");
  std::filesystem::copy_file(release_dir + "/" + kGoldenDatabase, copy);
  return copy;
}

TEST_CASE("compat: release 0.1.0's LC database opens, migrates and keeps every row") {
  auto dir = testing::TempDir::Create("lc-db-compat-");
  REQUIRE(dir.ok());
  lc::db::LcDatabase::Options options;
  options.path = CopyOf(*dir, kGolden + "/0.1.0");
  options.node_name = release::kNode;
  auto db = lc::db::LcDatabase::Open(options);
  REQUIRE(db.ok());
  CHECK((*db)->CheckIntegrity().ok());

  // Desired objects: each the Resource the GM sent, decoded by today's code.
  const auto expected_objects = release::DesiredObjects();
  auto inventory = (*db)->Inventory();
  REQUIRE(inventory.ok());
  CHECK(inventory->size() == expected_objects.size());
  for (const edge::v1::Resource& expected : expected_objects) {
    INFO(expected.ref().kind() << " " << expected.ref().name());
    auto stored = (*db)->Get(lc::ToDbRef(expected.ref()));
    REQUIRE(stored.ok());
    auto decoded = lc::DecodeDesiredObject(*stored);
    REQUIRE(decoded.ok());
    CHECK(Encode(*decoded) == Encode(expected));
  }

  // The dataset's scan: its result and its file's checkpoint (counting resumes from it).
  auto result = (*db)->GetDatasetResult(release::kDatasetNamespace, release::kDatasetName);
  REQUIRE(result.ok());
  CHECK(result->count == release::kDatasetSamples);
  auto files = (*db)->FileCheckpoints(release::kDatasetNamespace, release::kDatasetName);
  REQUIRE(files.ok());
  REQUIRE(files->size() == 1);
  auto checkpoint = lc::dataset::ParseCheckpoint(files->front().data);
  REQUIRE(checkpoint.ok());
  CHECK(*checkpoint == GoldenCheckpoint());

  auto last_sync = (*db)->LastSync();
  REQUIRE(last_sync.ok());
  CHECK(*last_sync == absl::FromUnixSeconds(1764000100));

  // The outbox: every undelivered report comes out, in the order it went in, as the cloud link
  // sends it; acked, it is gone.
  lc::LcDbReportSource source(db->get());
  auto pending = source.Pending(100, 0);
  REQUIRE(pending.ok());
  const auto expected_reports = release::UndeliveredReports();
  REQUIRE(pending->size() == expected_reports.size());
  uint64_t previous_seq = 0;
  for (size_t i = 0; i < expected_reports.size(); ++i) {
    INFO("report " << i);
    edge::v1::StatusReport sent = (*pending)[i];
    CHECK(sent.seq() > previous_seq);
    previous_seq = sent.seq();
    sent.clear_seq();
    CHECK(Encode(sent) == Encode(expected_reports[i]));
    CHECK(source.Ack((*pending)[i].seq()).ok());
  }
  auto depth = (*db)->OutboxDepth();
  REQUIRE(depth.ok());
  CHECK(*depth == 0);
}

TEST_CASE("compat: a golden database is refused for another node, as any database is") {
  auto dir = testing::TempDir::Create("lc-db-compat-");
  REQUIRE(dir.ok());
  lc::db::LcDatabase::Options options;
  options.path = CopyOf(*dir, kGolden + "/0.1.0");
  options.node_name = "another-node";
  CHECK(absl::IsFailedPrecondition(lc::db::LcDatabase::Open(options).status()));
}

}  // namespace
}  // namespace nereid::compat
