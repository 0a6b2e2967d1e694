#pragma once

// Dataset objects <-> the dataset monitor, and the monitor's results -> the database:
//   Apply    the Dataset's url/format to the monitor (a changed spec rescans); at start with the
//            stored checkpoint and the last reported result, so an unchanged dataset is neither
//            recounted in full nor reported again after a restart;
//   Forget   stops monitoring (the database already dropped its result and checkpoint);
//   OnReport one transaction: the result (PutResult) + the DatasetStatus report in the outbox,
//            which wakes the cloud link; a Dataset deleted meanwhile is skipped;
//   OnCheckpoint  the counter's checkpoint, on its own (a crash between the two is repaired by the
//            restart comparing the checkpoint's count with the stored result).

#include <string>

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
  void OnReport(const dataset::ScanReport& report);
  void OnCheckpoint(const std::string& key, const std::string& data);

 private:
  db::LcDatabase* const db_;
  dataset::DatasetMonitor* const monitor_;
};

// "namespace/name" (the monitor's and keeper's key) and back.
std::string NsNameKey(const std::string& ns, const std::string& name);
std::pair<std::string, std::string> SplitNsNameKey(const std::string& key);

}  // namespace nereid::lc
