#pragma once

// Dataset objects <-> the dataset monitor, and the monitor's results -> the database:
//   Apply    the Dataset's url/format to the monitor (a changed spec rescans); a Dataset re-created
//            under the same name (new uid) starts afresh, so the new object gets its first report
//            even when its spec equals the old one's;
//   Restore  the same at start, with the stored checkpoint and the last reported result, so an
//            unchanged dataset is neither recounted in full nor reported again after a restart;
//   Forget   stops monitoring (the database already dropped its result and checkpoint);
//   OnReport one transaction: the result (PutResult) + the DatasetStatus report in the outbox,
//            which wakes the cloud link; a Dataset deleted meanwhile is skipped;
//   OnCheckpoint  the counter's checkpoint, on its own (a crash between the two is repaired by the
//            restart comparing the checkpoint's count with the stored result).
// Both start with a crash-test failpoint (common/failpoint/failpoint.h), a no-op unless armed.

#include <map>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "localcontroller/dataset/dataset_monitor.h"
#include "localcontroller/db/lc_database.h"
#include "localcontroller/resource_handler.h"

namespace nereid::lc {

// The checkpoint row of a dataset in dataset_files (the monitor keeps one checkpoint per dataset).
inline constexpr char kDatasetCheckpointPath[] = "dataset";

class DatasetHandler final : public ResourceHandler {
 public:
  DatasetHandler(db::LcDatabase* db, dataset::DatasetMonitor* monitor) : db_(db), monitor_(monitor) {}

  void Apply(const edge::v1::Resource& resource) override;
  void Forget(const edge::v1::ObjectRef& ref) override;
  // Start-up: hands the monitor the Dataset with what the database remembers about it.
  void Restore(const edge::v1::Resource& resource);

  // Monitor callbacks (scanner thread).
  // Both return what storing gave (OK also when the dataset was deleted meanwhile).
  absl::Status OnReport(const dataset::ScanReport& report);
  absl::Status OnCheckpoint(const std::string& key, const std::string& data);

 private:
  // Records the uid held for `key`; true when another uid was held before (re-created object).
  bool Recreated(const std::string& key, const std::string& uid);

  db::LcDatabase* const db_;
  dataset::DatasetMonitor* const monitor_;
  absl::Mutex mu_;
  std::map<std::string, std::string> uids_ ABSL_GUARDED_BY(mu_);
};

// "namespace/name" (the monitor's and keeper's key) and back.
struct NsName {
  std::string ns;
  std::string name;
};
std::string NsNameKey(const std::string& ns, const std::string& name);
NsName SplitNsNameKey(const std::string& key);

}  // namespace nereid::lc
