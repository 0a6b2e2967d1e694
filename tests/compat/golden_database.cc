#include "tests/compat/golden_database.h"

#include "absl/time/time.h"
#include "common/status/macros.h"
#include "localcontroller/cloudlink/lc_db_adapter.h"
#include "localcontroller/db/lc_database.h"
#include "tests/compat/release_0_1_0.h"

namespace nereid::compat {

namespace release = release_0_1_0;

lc::dataset::Checkpoint GoldenCheckpoint() {
  lc::dataset::Checkpoint checkpoint;
  checkpoint.format = "txt";
  checkpoint.source = release::kDatasetFile;
  checkpoint.dev = 2049;
  checkpoint.ino = 131077;
  checkpoint.size = 98765;
  checkpoint.mtime_ns = 1764000000123456789;
  checkpoint.offset = 98765;
  checkpoint.samples = release::kDatasetSamples;
  checkpoint.guard_hash = 0x1234abcd5678ef90ULL;
  checkpoint.guard_len = 4096;
  checkpoint.count = release::kDatasetSamples;
  return checkpoint;
}

absl::Status WriteGoldenDatabase(const std::string& path) {
  lc::db::LcDatabase::Options options;
  options.path = path;
  options.node_name = release::kNode;
  ASSIGN_OR_RETURN(std::unique_ptr<lc::db::LcDatabase> db, lc::db::LcDatabase::Open(options));
  lc::LcDbDesiredStateStore desired(db.get());
  for (const edge::v1::Resource& resource : release::DesiredObjects()) {
    RETURN_IF_ERROR(desired.Upsert(resource));
  }
  lc::db::DatasetResult result;
  result.count = release::kDatasetSamples;
  result.scanned_at = absl::FromUnixSeconds(1764000000);
  RETURN_IF_ERROR(db->PutDatasetResult(release::kDatasetNamespace, release::kDatasetName, result));
  RETURN_IF_ERROR(db->PutFileCheckpoint(release::kDatasetNamespace, release::kDatasetName,
                                        release::kDatasetFile,
                                        lc::dataset::SerializeCheckpoint(GoldenCheckpoint())));
  for (const edge::v1::StatusReport& report : release::UndeliveredReports()) {
    RETURN_IF_ERROR(lc::EnqueueReport(*db, report).status());
  }
  RETURN_IF_ERROR(desired.RecordSync(absl::FromUnixSeconds(1764000100)));
  return db->CheckIntegrity();
}

}  // namespace nereid::compat
